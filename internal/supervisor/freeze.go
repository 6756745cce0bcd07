package supervisor

import (
	"fmt"
	"syscall"
	"time"
)

// Freeze SIGSTOPs the process group of name: the hung-process case. It
// stays frozen until Thaw, and is reported as a Frozen event. Freezing a
// frozen process does nothing.
func (s *Supervisor) Freeze(name string) error { return s.setFrozen(name, true) }

// Thaw SIGCONTs the process group of name after Freeze (a Frozen event with
// Frozen false). Thawing a process that is not frozen does nothing.
func (s *Supervisor) Thaw(name string) error { return s.setFrozen(name, false) }

// Frozen reports whether name is running and frozen.
func (s *Supervisor) Frozen(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.procs[name]
	return ok && p.cur != nil && p.cur.frozen.Load()
}

func (s *Supervisor) setFrozen(name string, freeze bool) error {
	return s.withRunning(name, func(p *proc, r *run) error {
		if !freeze {
			if err := s.thawRun(r); err != nil {
				return fmt.Errorf("supervisor: thaw %s: %w", name, err)
			}
			return nil
		}
		if r.frozen.Load() {
			return nil
		}
		if err := r.signal(syscall.SIGSTOP); err != nil {
			return fmt.Errorf("supervisor: freeze %s: %w", name, err)
		}
		r.frozen.Store(true)
		s.mu.Lock()
		if p.cur == r {
			s.events.push(Frozen{Name: r.name, PID: r.pid, At: time.Now(), Frozen: true})
		}
		s.mu.Unlock()
		p.logLine(r, fmt.Sprintf("=== %s frozen pid %d (SIGSTOP) ===", stamp(time.Now()), r.pid))
		return nil
	})
}

// thawRun SIGCONTs the run's group. It always signals (a group member
// stopped some other way is continued too) and reports a thaw only when
// Freeze had frozen it.
func (s *Supervisor) thawRun(r *run) error {
	if err := r.signal(syscall.SIGCONT); err != nil {
		return err
	}
	if !r.frozen.Swap(false) {
		return nil
	}
	s.mu.Lock()
	s.events.push(Frozen{Name: r.name, PID: r.pid, At: time.Now(), Frozen: false})
	p := s.procs[r.name]
	s.mu.Unlock()
	if p != nil {
		p.logLine(r, fmt.Sprintf("=== %s thawed pid %d (SIGCONT) ===", stamp(time.Now()), r.pid))
	}
	return nil
}
