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

// SetRebuild makes consumer-current rebuild with strategy from its next
// start. A running consumer-current is not restarted: it is told at once
// (POST /rebuild) and keeps up what that start needs from now on (a
// snapshot, its changelog); SetRebuild returns once it saved it a first
// time, so a start right after has it.
func (l *Lab) SetRebuild(strategy string) error {
	s, err := lesson.ParseRebuild(strategy)
	if err != nil {
		return err
	}
	l.rebuildMu.Lock()
	defer l.rebuildMu.Unlock()
	return l.setRebuildLocked(s)
}

// CycleRebuild moves consumer-current's strategy one step along replay →
// snapshot → changelog → replay (the rebuild key) and returns it.
func (l *Lab) CycleRebuild() (string, error) {
	l.rebuildMu.Lock()
	defer l.rebuildMu.Unlock()
	var cur string
	l.Observe(func(b *board.Board) { cur = b.Rebuild() })
	next := lesson.Rebuild(cur).Next()
	return string(next), l.setRebuildLocked(next)
}

func (l *Lab) setRebuildLocked(s lesson.Rebuild) error {
	l.emit(board.Rebuild{At: time.Now(), Strategy: string(s)})
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
