package usage

import (
	"context"
	"sync/atomic"
	"time"
)

// EffectDelay is how long every usage write is held before it reaches the
// store (--effect-delay, POST /effect-delay): the lab's stand-in for a slow
// database request, long enough that a rebalance can revoke the write's
// partition while it is in flight. Safe for concurrent use.
type EffectDelay struct{ d atomic.Int64 }

// Set changes the delay for writes held from now on.
func (e *EffectDelay) Set(d time.Duration) { e.d.Store(int64(d)) }

// Get is the delay now (0 for a nil EffectDelay).
func (e *EffectDelay) Get() time.Duration {
	if e == nil {
		return 0
	}
	return time.Duration(e.d.Load())
}

// hold waits for the delay; false means ctx ended first (the write was
// never sent).
func (e *EffectDelay) hold(ctx context.Context) bool {
	d := e.Get()
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
