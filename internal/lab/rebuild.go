package lab

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// snapshotFile is consumer-current's snapshot in the run directory.
const snapshotFile = "consumer-current.snapshot"

// prepareTimeout bounds the wait for a running consumer-current's first
// snapshot or changelog publication after a switch.
const prepareTimeout = 30 * time.Second

func (l *Lab) setRebuildLocked(s lesson.Rebuild) error {
	l.changeSettings(nil, func(set *settings) { set.rebuild = s })
	if err := l.sup.SetArgs(board.Current, l.roleArgs(board.Current)); err != nil {
		return err
	}
	if !l.sup.Running(board.Current) {
		l.Note("consumer-current is not running: its next start rebuilds by " + string(s) + " (r starts it)")
		return nil
	}
	addr, err := l.awaitHTTP(board.Current, 10*time.Second)
	if err != nil {
		return err
	}
	pid := l.sup.PID(board.Current)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := postControl(ctx, addr, "/rebuild", url.Values{"strategy": {string(s)}}, "tell consumer-current", nil); err != nil {
		return err
	}
	if s == lesson.Replay {
		return nil
	}
	saved := l.waitBoard(prepareTimeout, func(b *board.Board) bool {
		v := b.Process(board.Current)
		return v.PID != pid || v.Current.Prepared == string(s)
	})
	if !saved {
		return fmt.Errorf("consumer-current did not save its %s within %s (see its log)", s, prepareTimeout)
	}
	return nil
}

// snapshotPath is where consumer-current writes its snapshot.
func (l *Lab) snapshotPath() string { return filepath.Join(l.cfg.RunDir, snapshotFile) }
