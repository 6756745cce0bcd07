package lab

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// The methods below are what keys (ui.Controller) and script actions
// (script.Target) ask of a run. Each blocks until the supervisor has acted.

// Crash SIGKILLs the process group: a real crash, no cleanup.
func (l *Lab) Crash(name string) error {
	pid := l.sup.PID(name)
	if err := l.sup.Crash(name); err != nil {
		return err
	}
	l.awaitExitSeen(pid)
	return nil
}

// Stop stops a process gracefully (SIGTERM, SIGKILL after a timeout).
func (l *Lab) Stop(name string) error { return l.sup.Stop(name) }

// Start starts a process that is not running.
func (l *Lab) Start(name string) error { return l.sup.Start(name) }

// Restart stops the process if it runs, then starts it.
func (l *Lab) Restart(name string) error { return l.sup.Restart(name) }

// Tail returns the last n lines the process wrote to stderr.
func (l *Lab) Tail(name string, n int) []string { return l.sup.Tail(name, n) }

// TogglePause pauses or resumes the producer.
func (l *Lab) TogglePause() error {
	l.mu.Lock()
	paused := l.paused
	l.mu.Unlock()
	if paused {
		return l.Resume()
	}
	return l.Pause()
}

// Pause makes the producer stop publishing (SIGUSR1).
func (l *Lab) Pause() error { return l.setPaused(true) }

// Resume makes the producer publish again (SIGUSR2).
func (l *Lab) Resume() error { return l.setPaused(false) }

func (l *Lab) setPaused(p bool) error {
	sig := syscall.SIGUSR2
	if p {
		sig = syscall.SIGUSR1
	}
	if err := l.sup.Signal(Producer, sig); err != nil {
		return err
	}
	l.mu.Lock()
	l.paused = p
	l.mu.Unlock()
	return nil
}

// ArmCrash arms a crash point of consumer-usage over its HTTP endpoint.
//
// The process announces the arm on its status stream before it replies,
// and arms only once the reply is flushed. A reply lost all the same (the
// connection cut as the process dies) is not taken for a failure when the
// announcement arrived: the point was armed, and may already have fired.
func (l *Lab) ArmCrash(name, point string) error {
	if name != Usage {
		return fmt.Errorf("crash points exist only on %s", Usage)
	}
	addr, err := l.awaitHTTP(Usage, 10*time.Second)
	if err != nil {
		return err
	}
	pid := l.sup.PID(name)
	before := l.armsAnnounced(name, pid)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://"+addr+"/crash-at?point="+url.QueryEscape(point), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if l.awaitArmAnnounced(name, pid, before, 2*time.Second) {
			return nil
		}
		return fmt.Errorf("arm crash point: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("arm crash point %q: %s", point, resp.Status)
	}
	return nil
}

// armNote counts the CrashPointArmed announcements of one incarnation.
type armNote struct {
	pid, n int
}

// armsAnnounced is how many arms pid has announced so far.
func (l *Lab) armsAnnounced(name string, pid int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.arms[name]; a.pid == pid {
		return a.n
	}
	return 0
}

// awaitArmAnnounced waits until pid announces an arm after the before-th.
func (l *Lab) awaitArmAnnounced(name string, pid, before int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if l.armsAnnounced(name, pid) > before {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // the pump relays the stdout line: poll it
	}
}

// awaitHTTP returns the HTTP address of a running process, waiting while
// it has just been started and has not announced it yet: a script's
// "restart consumer-usage" followed by "crash-at consumer-usage ..." must
// not fail because the new process is a few milliseconds from listening.
func (l *Lab) awaitHTTP(name string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if addr := l.httpAddr(name); addr != "" {
			return addr, nil
		}
		if !l.sup.Running(name) {
			return "", fmt.Errorf("%s is not running", name)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s is not listening on HTTP %s after its start", name, timeout)
		}
		time.Sleep(20 * time.Millisecond) // nothing signals the Listening event here: poll it
	}
}

// SetUsageMode restarts consumer-usage in naive or guarded mode.
func (l *Lab) SetUsageMode(mode string) error {
	if _, err := kafkacfg.ParseUsageMode(mode); err != nil {
		return err
	}
	l.mu.Lock()
	l.mode = mode
	l.mu.Unlock()
	return l.restartUsage()
}

// SetUsageReset restarts consumer-usage with latest (its fixed group) or
// earliest (a fresh group, so the whole topic is replayed).
func (l *Lab) SetUsageReset(reset string) error {
	if _, err := kafkacfg.ParseReset(reset); err != nil {
		return err
	}
	l.mu.Lock()
	l.reset = reset
	l.mu.Unlock()
	return l.restartUsage()
}

func (l *Lab) restartUsage() error {
	l.mu.Lock()
	mode, reset := l.mode, l.reset
	l.mu.Unlock()
	l.emit(board.Mode{UsageMode: mode, UsageReset: reset})
	if err := l.sup.SetArgs(Usage, l.roleArgs(Usage)); err != nil {
		return err
	}
	return l.sup.Restart(Usage)
}

// SetMode is the script form of SetUsageMode.
func (l *Lab) SetMode(name, mode string) error {
	if name != Usage {
		return fmt.Errorf("only %s has a mode", Usage)
	}
	return l.SetUsageMode(mode)
}

// SetReset is the script form of SetUsageReset.
func (l *Lab) SetReset(name, reset string) error {
	if name != Usage {
		return fmt.Errorf("only %s has an offset reset", Usage)
	}
	return l.SetUsageReset(reset)
}

// WaitCaughtUp returns once consumer-current is caught up and
// consumer-usage's committed offsets reach the high watermarks, as the
// board sees them.
//
// It then waits for the state, usage and audit to be polled once more, so
// that a report taken right after (wait-caught-up, then quit) shows the
// caught-up run and not answers read a moment before the last writes.
func (l *Lab) WaitCaughtUp(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var since time.Time
	var hwm map[int32]int64
	for {
		l.mu.Lock()
		ok := false
		if l.mirror != nil && l.mirror.CaughtUp() {
			if since.IsZero() {
				since = time.Now()
				hwm, _ = l.mirror.HighWatermarks()
			}
			ok = l.mirror.RefreshedSince(since, hwm)
		} else {
			since = time.Time{}
		}
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Quit asks the front end to end the run.
func (l *Lab) Quit() { l.RequestQuit() }
