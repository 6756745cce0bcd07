package scenario

import (
	"context"
	"sync"
)

// Session runs at most one scenario at a time in the background, for a
// dashboard where scenarios are started and stopped from the keyboard.
type Session struct {
	Runner Runner

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	last   *Result
}

// Catalog lists the scenarios a session can start (the dashboard's
// picker).
func (s *Session) Catalog() []Scenario { return Catalog() }

// Start stops the running scenario (if any) and starts name; it returns at
// once, the run continues in the background.
func (s *Session) Start(name string) error {
	sc, ok := Lookup(name)
	if !ok {
		return ErrUnknown(name)
	}
	s.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.mu.Lock()
	s.cancel, s.done = cancel, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		res := s.Runner.Run(ctx, sc)
		s.mu.Lock()
		s.last = &res
		s.mu.Unlock()
	}()
	return nil
}

// Stop cancels the running scenario and waits until it has ended (its
// cleanup done, its result recorded).
func (s *Session) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Wait blocks until the running scenario (if any) ends, or ctx does.
func (s *Session) Wait(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Last returns the result of the latest finished run.
func (s *Session) Last() (Result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return Result{}, false
	}
	return *s.last, true
}
