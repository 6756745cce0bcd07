package usage

import (
	"context"
	"sync"
	"time"
)

// EffectDelay is how long every usage write is held before it reaches the
// store (--effect-delay, POST /effect-delay): the lab's stand-in for a slow
// database request, long enough that a rebalance can revoke the write's
// partition while it is in flight. A change applies to writes already held
// too (measured from when each was sent), so setting 0 releases them.
// Safe for concurrent use.
type EffectDelay struct {
	mu      sync.Mutex
	d       time.Duration
	changed chan struct{} // closed and replaced by Set
}

// Set changes the delay.
func (e *EffectDelay) Set(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.d = d
	if e.changed != nil {
		close(e.changed)
	}
	e.changed = make(chan struct{})
}

// Get is the delay now (0 for a nil EffectDelay).
func (e *EffectDelay) Get() time.Duration {
	d, _ := e.get()
	return d
}

func (e *EffectDelay) get() (time.Duration, <-chan struct{}) {
	if e == nil {
		return 0, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	return e.d, e.changed
}

// hold waits until the delay has passed since the call; false means ctx
// ended first (the write was never sent).
func (e *EffectDelay) hold(ctx context.Context) bool {
	sent := time.Now()
	for {
		d, changed := e.get()
		left := time.Until(sent.Add(d))
		if left <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(left)
		select {
		case <-t.C:
			return true
		case <-changed:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}
