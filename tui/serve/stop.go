package serve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lab"
)

// Close stops accepting sessions, ends every session and stops every lab,
// the presenter's last (it holds the embedded broker and store).
func (s *Server) Close(ctx context.Context) {
	s.mu.Lock()
	s.closing = true
	labs := make([]*attendee, 0, len(s.labs))
	for _, a := range s.labs {
		if a.expiry != nil {
			a.expiry.Stop()
		}
		labs = append(labs, a)
	}
	s.labs = map[string]*attendee{}
	s.mu.Unlock()
	_ = s.srv.Close()
	if s.web != nil {
		_ = s.web.Close()
		s.seats.closeAll()
	}
	var wg sync.WaitGroup
	for _, a := range labs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-a.launched
			s.finish(ctx, a)
			a.shutdown(ctx)
		}()
	}
	wg.Wait()
	s.presenter.shutdown(ctx)
}

// finish ends a running lab as the dashboard ends a run: the producer
// paused, the consumers caught up (at most 30 s), then its report written
// to report.json in its run directory: the lab's numbers as they were,
// for the presenter (and the tests) to compare with the topic.
func (s *Server) finish(ctx context.Context, a *attendee) {
	a.opMu.Lock()
	running := !a.stopped && a.launchErr == nil
	a.opMu.Unlock()
	if down := notRunning(a.lab); running && len(down) > 0 {
		// Catching up needs every process: a crashed one never would.
		s.cfg.Log.Info("lab not waited for: a process is not running", "lab", a.id, "not_running", strings.Join(down, ","))
	} else if running {
		if err := a.lab.Do(ctx, action.Call{Name: action.Pause, Value: "pause"}).Err; err == nil {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if err := a.lab.WaitCaughtUp(wctx); err != nil {
				s.cfg.Log.Warn("lab not caught up before the server stopped", "lab", a.id, "err", err)
			}
			cancel()
		}
	}
	b, err := json.MarshalIndent(a.lab.Report(), "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(s.cfg.DataDir, "labs", a.id, "report.json"), append(b, '\n'), 0o644)
	}
	if err != nil {
		s.cfg.Log.Warn("lab report not written", "lab", a.id, "err", err)
	}
}

// KillAll kills every child at once (a second signal while stopping).
func (s *Server) KillAll() {
	s.mu.Lock()
	for _, a := range s.labs {
		a.lab.KillAll()
	}
	s.mu.Unlock()
	s.presenter.lab.KillAll()
}

// notRunning lists the lab's own processes that are not running.
func notRunning(l *lab.Lab) []string {
	var down []string
	l.Observe(func(b *board.Board) {
		for _, p := range b.Processes() {
			if p.Name != board.Broker && p.Name != board.Store && !p.Alive {
				down = append(down, p.Name)
			}
		}
	})
	return down
}
