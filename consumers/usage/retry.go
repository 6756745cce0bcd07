package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// DefaultSlowAfter is when a store call counts as slow.
const DefaultSlowAfter = time.Second

// trouble reports store trouble to OnStoreTrouble, if set.
func (p *Processor) trouble(reason string) {
	if p.cfg.OnStoreTrouble != nil {
		p.cfg.OnStoreTrouble(reason)
	}
}

// loadTimeout bounds one Load attempt. A load is many store calls (the
// checkpoints, then one lookup per sensor for records past its checkpoint),
// and on FerretDB v1 a lookup by _id reads the whole usage collection, so a
// load takes seconds on a long history: bounded like one call, it could be
// cut off on a loaded machine and retried from the start for ever.
func loadTimeout(op time.Duration) time.Duration { return max(op, 2*time.Minute) }

// retry runs op until it succeeds or ctx ends. A store that fails never
// makes the consumer move past a record: it waits, reporting Retrying.
func (p *Processor) retry(ctx context.Context, what string, op func(context.Context) error) error {
	return p.retryWithin(ctx, what, p.cfg.OpTimeout, op)
}

// retryWithin is retry with each attempt bounded by timeout.
func (p *Processor) retryWithin(ctx context.Context, what string, timeout time.Duration, op func(context.Context) error) error {
	delay := p.cfg.MinBackoff
	failed := false
	for {
		opCtx, cancel := context.WithTimeout(ctx, timeout)
		// Once a call failed the store is unreachable: a retry waiting for
		// it is not "slow" on top of that.
		slow := time.AfterFunc(p.cfg.SlowAfter, func() {
			if !failed {
				p.trouble(fmt.Sprintf("store slow: %s not answered within %s", what, p.cfg.SlowAfter))
			}
		})
		err := op(opCtx)
		slow.Stop()
		cancel()
		if err == nil {
			if failed {
				p.log.Info("store reachable again", "op", what)
				p.cfg.Emitter.Emit(status.Event{Type: status.Connected, Endpoint: "mongo", Addr: p.cfg.StoreAddr})
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		failed = true
		p.storeErrors.Add(1)
		p.trouble("store unreachable: " + what + ": " + err.Error())
		p.log.Warn("store call failed; retrying", "op", what, "error", err, "backoff", delay)
		p.cfg.Emitter.Emit(status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: p.cfg.StoreAddr,
			Error: what + ": " + err.Error()})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, p.cfg.MaxBackoff)
	}
}
