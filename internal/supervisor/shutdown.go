package supervisor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"
)

// KillAll SIGKILLs the process group of every running child and returns at
// once, without waiting. It is meant for paths that are about to exit and
// cannot afford an orderly Shutdown: a second Ctrl-C, a fatal signal
// handler, a panic handler. It takes only a short internal lock, never waits
// on a child, and is safe to call at any time and more than once. The exits
// are reported (Deliberate true) if the process lives long enough.
func (s *Supervisor) KillAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if r := p.cur; r != nil {
			r.deliberate.Store(true)
			_ = r.signal(syscall.SIGKILL)
		}
	}
}

// Shutdown stops every running child in reverse dependency order (highest
// Tier first, each tier concurrently, as Stop does), then closes the Events
// channel. If ctx ends first, what is still running is SIGKILLed at once
// and ctx's error is returned. After Shutdown, Start fails with ErrClosed.
// Calling it again returns the first call's result.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdown(ctx) })
	return s.shutdownErr
}

func (s *Supervisor) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	tiers := map[int][]*proc{}
	for _, p := range s.procs {
		tiers[p.spec.Tier] = append(tiers[p.spec.Tier], p)
	}
	s.mu.Unlock()

	order := make([]int, 0, len(tiers))
	for t := range tiers {
		order = append(order, t)
	}
	slices.Sort(order)
	slices.Reverse(order)
	for _, t := range order {
		var wg sync.WaitGroup
		for _, p := range tiers[t] {
			wg.Go(func() {
				// ctl waits for a Start or Stop in progress, so nothing
				// started concurrently is missed.
				p.ctl.Lock()
				defer p.ctl.Unlock()
				_ = s.stop(ctx, p)
			})
		}
		wg.Wait()
	}

	s.mu.Lock()
	wd := s.wd
	s.wd = nil
	s.mu.Unlock()
	wd.close()
	s.events.close()
	return ctx.Err()
}

// stop is Stop with ctx cutting the grace period short. Caller holds p.ctl.
func (s *Supervisor) stop(ctx context.Context, p *proc) error {
	s.mu.Lock()
	r, name := p.cur, p.spec.Name
	s.mu.Unlock()
	if r == nil {
		return fmt.Errorf("%w: %s", ErrNotRunning, name)
	}
	r.deliberate.Store(true)
	if err := r.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("supervisor: stop %s: %w", r.name, err)
	}
	// A frozen group keeps the SIGTERM pending until it is continued; the
	// SIGCONT comes after it so the first thing it does is handle it.
	if err := s.thawRun(r); err != nil {
		return fmt.Errorf("supervisor: stop %s: %w", r.name, err)
	}
	grace := time.NewTimer(s.cfg.StopTimeout)
	defer grace.Stop()
	select {
	case <-r.done:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	if err := r.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("supervisor: stop %s: %w", r.name, err)
	}
	<-r.done
	return nil
}
