package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The script's waits on the board: each returns once its condition holds on
// the lab's board, or ctx's error.

// WaitHeld returns once consumer-usage instance name holds a usage write
// under its effect delay (as its events told the board, since the delay
// last changed), or ctx's error.
func (l *Lab) WaitHeld(ctx context.Context, name string) error {
	if !board.IsUsage(name) {
		return fmt.Errorf("only consumer-usage instances hold writes, not %s", name)
	}
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.HoldsWrites(name) })
}

// WaitDown returns once name is not running as the board sees it (its
// exit reached the board), or ctx's error.
func (l *Lab) WaitDown(ctx context.Context, name string) error {
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.Has(name) && !b.Alive(name) })
}

// WaitISR returns once the latest metadata of the topic shows every
// partition with a leader and exactly n in-sync replicas, or ctx's error.
func (l *Lab) WaitISR(ctx context.Context, n int) error {
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.Partitions().AllInSync(n) })
}

// WaitBlocked returns once the producer reports records it cannot get
// acknowledged (its Blocked event), or ctx's error.
func (l *Lab) WaitBlocked(ctx context.Context, name string) error {
	if name != board.Producer {
		return fmt.Errorf("only the producer is blocked, not %s", name)
	}
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.Blocked(name) })
}

// WaitBalanced returns once the latest metadata shows every partition led
// by its preferred (first) replica, or ctx's error.
func (l *Lab) WaitBalanced(ctx context.Context) error {
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.Partitions().Balanced() })
}

// WaitLeads returns once the latest metadata shows broker name (node N for
// broker-N) leading a partition of the topic, or ctx's error.
func (l *Lab) WaitLeads(ctx context.Context, name string) error {
	n, ok := board.ClusterBrokerNumber(name)
	if !ok {
		return fmt.Errorf("%s is not a broker of the cluster", name)
	}
	return l.waitUntil(ctx, func(b *board.Board) bool {
		v := b.Partitions()
		return v.Fresh() && len(v.LedBy(int32(n))) > 0
	})
}

// WaitDeleted returns once a partition's log start is past consumer-usage's
// committed offset (retention deleted messages it had not read), or ctx's
// error.
func (l *Lab) WaitDeleted(ctx context.Context) error {
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.DeletedPastCommit() })
}

// WaitLastDeleted returns once retention deleted the last message of sensor
// that the audit read, or ctx's error.
func (l *Lab) WaitLastDeleted(ctx context.Context, sensor string) error {
	return l.waitUntil(ctx, func(b *board.Board) bool { return b.LastDeleted(sensor) })
}

// waitUntil waits until cond holds on the board, or ctx ends.
func (l *Lab) waitUntil(ctx context.Context, cond func(*board.Board) bool) error {
	for {
		if l.waitBoard(time.Second, cond) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
