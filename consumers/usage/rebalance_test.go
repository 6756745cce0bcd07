package usage

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// The seed's failure timeline (004), without Kafka: the old owner's batch
// at offsets 6..8 is in flight (held by the effect delay) when its
// partition is revoked; the new owner starts from the committed offset 6,
// replays 6..8 and goes on; then the old owner's write completes. Guarded:
// the old write is refused (same effect identities), no checkpoint of the
// old owner lands, totals exact. Naive: the old write adds 6..8 again.
func TestLateWriteAfterRevoke(t *testing.T) {
	for _, tc := range []struct {
		mode          lesson.Mode
		wantRecords   int64 // usage records in the store
		wantPrevented int64
	}{
		{lesson.Guarded, 9, 3},
		{lesson.Naive, 12, 0},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			_, st := freshDB(t)
			log := series(t, "s1", 12)
			feed(t, newProcessorQuiet(t, st, tc.mode), log[:6]...) // applied and committed through 5

			old, sink := newTestProcessor(t, st, tc.mode, nil)
			var revoked atomic.Bool
			old.cfg.Owned = func(int32) bool { return !revoked.Load() }
			old.cfg.EffectDelay = &EffectDelay{}
			old.cfg.EffectDelay.Set(time.Hour) // released by hand below
			hold := old.cfg.EffectDelay

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type out struct {
				res []Result
				err error
			}
			done := make(chan out, 1)
			go func() {
				var res []Result
				var err error
				if tc.mode == lesson.Guarded {
					res, err = old.HandleBatch(ctx, log[6:9])
				} else {
					res, err = old.HandleBatch(ctx, log[6:7]) // the seed's loop: one message in hand
				}
				done <- out{res, err}
			}()
			waitFor(t, 5*time.Second, "the old owner's write held", func() bool {
				_, ok := sink.first(status.EffectHeld)
				return ok
			})
			revoked.Store(true)
			owner := newProcessorQuiet(t, st, tc.mode) // assigned: loads what is durable
			feed(t, owner, log[6:12]...)
			hold.Set(0) // the old owner's request reaches the store now
			var o out
			select {
			case o = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the old owner's write never completed")
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			s := old.Stats()
			lateWant := int64(3)
			if tc.mode == lesson.Naive {
				lateWant = 1
			}
			if s.Late != lateWant || s.Prevented != tc.wantPrevented/3*lateWant {
				t.Errorf("old owner: late %d prevented %d, want %d and %d", s.Late, s.Prevented, lateWant, tc.wantPrevented/3*lateWant)
			}
			ev, ok := sink.first(status.LateWrite)
			if !ok || ev.Partition != 0 || ev.Offset != 6 || ev.Count != lateWant {
				t.Errorf("late write event %+v (found %v), want partition 0 offset 6 count %d", ev, ok, lateWant)
			}
			tot := totalsOf(t, st)["s1"]
			switch tc.mode {
			case lesson.Guarded:
				sameTotals(t, "guarded", map[string]store.Totals{"s1": tot}, map[string]store.Totals{"s1": deltas(11)})
				if cp := checkpointsOf(t, st)["s1"]; cp.Offset != 11 {
					t.Errorf("checkpoint at %d, want 11 (the old owner wrote none)", cp.Offset)
				}
				if s.Processed != 0 {
					t.Errorf("old owner counted %d processed, want 0 (the partition is the new owner's)", s.Processed)
				}
			case lesson.Naive:
				// One message too many: offset 6's delta twice.
				if tot != deltas(12) {
					t.Errorf("naive totals %+v, want %+v (offset 6 counted twice)", tot, deltas(12))
				}
			}
		})
	}
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
