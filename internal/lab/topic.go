package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/producer"
)

// topicTimeout bounds one request about the topic's partitions.
const topicTimeout = 10 * time.Second

// errNotLaunched: an action about the topic before the lab reached the broker.
var errNotLaunched = errors.New("the dashboard has not reached the broker yet")

// AddPartitions grows the topic to total partitions (add-partitions N, the
// P key). Kafka adds partitions and never removes them, so a total at or
// below the current count is refused here, with the count. The producer
// and the consumers pick the new ones up at their next metadata refresh
// (kafkacfg.MetadataRefresh); the board says which keys move and when each
// party used the new partitions, timed from the broker's answer.
func (l *Lab) AddPartitions(total int) error {
	if l.offsets == nil {
		return errNotLaunched
	}
	ctx, cancel := context.WithTimeout(context.Background(), topicTimeout)
	defer cancel()
	parts, err := l.offsets.Partitions(ctx, l.cfg.Topic)
	if err != nil {
		return err
	}
	if total <= len(parts) {
		return fmt.Errorf("%s has %d partitions: a topic cannot shrink, and %d adds none (recreate-topic starts it again with 3)",
			l.cfg.Topic, len(parts), total)
	}
	l.Note(fmt.Sprintf("add-partitions: growing %s from %d to %d partitions", l.cfg.Topic, len(parts), total))
	if err := l.offsets.AddPartitions(ctx, l.cfg.Topic, total); err != nil {
		return err
	}
	added := board.PartitionsAdded{At: time.Now(), Topic: l.cfg.Topic, From: len(parts), To: total, Sensors: l.cfg.Sensors}
	for i := range l.cfg.Sensors {
		id := producer.SensorID(i, l.cfg.Sensors)
		if from, to := kafkacfg.PartitionFor(id, len(parts)), kafkacfg.PartitionFor(id, total); from != to {
			added.Moves = append(added.Moves, board.PlannedMove{Sensor: id, From: from, To: to})
		}
	}
	l.emit(added)
	return nil
}

// keyMoves is the audit's moves in the board's terms.
func keyMoves(t audit.Truth) []board.KeyMove {
	var out []board.KeyMove
	for _, m := range t.Moves() {
		out = append(out, board.KeyMove{Sensor: m.Sensor, From: m.From, To: m.To, LastOffset: m.LastOffset,
			FirstOffset: m.FirstOffset, FirstTimestamp: m.FirstTimestamp})
	}
	return out
}

// reader is the audit reader running now.
func (l *Lab) reader() *audit.Reader {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.auditor
}

// runAudit makes r the lab's audit reader and runs it until the run ends
// or the next runAudit's caller stops it (stopAudit).
func (l *Lab) runAudit(r *audit.Reader) {
	ctx, cancel := context.WithCancel(l.runCtx)
	done := make(chan struct{})
	l.mu.Lock()
	l.auditor = r
	l.stopAudit = func() { cancel(); <-done }
	l.mu.Unlock()
	l.pollers.Add(1)
	go func() {
		defer l.pollers.Done()
		defer close(done)
		_ = r.Run(ctx)
	}()
}

// recreateRoles are the processes that read or write the topic besides
// consumer-usage (which a new baseline stops and starts), in start order.
var recreateRoles = []string{board.Current, board.Producer}

// RecreateTopic deletes the topic and creates it again with 3 partitions
// (recreate-topic): the way back after add-partitions, since Kafka removes
// no partition. Everything that reads or writes the topic stops first (a
// producer left running would write into the deletion), the audit starts
// over on the new topic, consumer-usage gets a new baseline (its records
// and checkpoints name offsets of the deleted topic) and everything starts
// again: consumer-current replays the empty topic, the producer publishes
// from where its fleet is.
//
// Recreating keeps the topic's name, the one every role, the audit and a
// workshop's labs know it by; a topic of its own for the lesson would have
// every one of them switch and back. The price is the topic's history.
func (l *Lab) RecreateTopic(ctx context.Context) error {
	if l.offsets == nil {
		return errNotLaunched
	}
	l.changeMu.Lock()
	defer l.changeMu.Unlock()
	l.Note(fmt.Sprintf("recreate-topic: stopping the producer and consumer-current to delete %s", l.cfg.Topic))
	for i := len(recreateRoles) - 1; i >= 0; i-- {
		if name := recreateRoles[i]; l.sup.Running(name) {
			if err := l.Stop(name); err != nil {
				return fmt.Errorf("recreate-topic: %w", err)
			}
		}
	}
	err := l.newBaselineLocked("recreate-topic", func(bctx context.Context) error {
		if deadline, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			bctx, cancel = context.WithDeadline(bctx, deadline)
			defer cancel()
		}
		return l.recreate(bctx)
	})
	if err != nil {
		return err
	}
	for _, name := range recreateRoles {
		if err := l.Start(name); err != nil {
			return fmt.Errorf("recreate-topic: %w", err)
		}
	}
	return nil
}

// recreate stops the audit, deletes the topic, creates it with 3
// partitions and starts a new audit reader on it.
func (l *Lab) recreate(ctx context.Context) error {
	l.mu.Lock()
	stop := l.stopAudit
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	brokers, _ := l.Addresses()
	if err := l.offsets.DeleteTopic(ctx, l.cfg.Topic); err != nil {
		return err
	}
	rf, topicConfig := l.replication()
	for {
		// A name just freed can still be taken for a moment on a cluster.
		created, err := l.offsets.EnsureTopicReplicated(ctx, l.cfg.Topic, 3, rf, topicConfig)
		if err != nil {
			return err
		}
		if created {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s still exists after its deletion: %w", l.cfg.Topic, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	l.emit(board.TopicRecreated{At: time.Now(), Topic: l.cfg.Topic, Partitions: 3})
	if d := l.retentionSetting(); d > 0 {
		if err := l.applyRetention(ctx, d); err != nil {
			return err
		}
	}
	r, err := audit.NewReader(brokers, l.cfg.Topic, l.log)
	if err != nil {
		return fmt.Errorf("audit reader: %w", err)
	}
	l.runAudit(r)
	return nil
}

// PublishHistory has the producer publish n messages of history at once
// (history N): a backlog for a stopped consumer, in a few seconds.
func (l *Lab) PublishHistory(ctx context.Context, n int) error {
	return l.publishHistory(ctx, int64(n), "history "+fmt.Sprint(n))
}
