package usage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// series returns n readings of one sensor on partition 0 from offset 0:
// reading i has hours 100.00 + 1.25*i and km 1000.00 + 10.50*i, so every
// delta is 1.25 h / 10.50 km.
func series(t *testing.T, sensor string, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = rec(sensor, 0, int64(i), reading(t, sensor, i, 10000+125*int64(i), 100000+1050*int64(i)))
	}
	return out
}

// deltas is the usage of k consecutive deltas of series.
func deltas(k int64) store.Totals {
	return store.Totals{HoursCents: 125 * k, KmCents: 1050 * k, Records: k}
}

func TestNaiveDeltasAndCheckpoint(t *testing.T) {
	_, st := freshDB(t)
	p, _ := newTestProcessor(t, st, lesson.Naive, nil)
	res := feed(t, p,
		rec("s1", 0, 0, reading(t, "s1", 0, 10000, 100000)),
		rec("s1", 0, 1, reading(t, "s1", 1, 10200, 101050)),
		rec("s1", 0, 2, reading(t, "s1", 2, 10200, 101050)), // idle: no record
		rec("s2", 1, 0, reading(t, "s2", 0, 500, 700)),      // first of s2: baseline only
		rec("s1", 0, 3, reading(t, "s1", 3, 10325, 101175)),
	)
	recorded := []bool{false, true, false, false, true}
	for i, r := range res {
		if r.Outcome != Applied || r.Recorded != recorded[i] {
			t.Errorf("message %d: %+v, want applied, recorded=%v", i, r, recorded[i])
		}
	}
	if res[1].Usage.DeltaHours != 2 || res[1].Usage.DeltaKm != 10.5 || res[1].Usage.Date != "2026-01-01" {
		t.Errorf("first delta %+v, want 2 h, 10.5 km on 2026-01-01", res[1].Usage)
	}
	sameTotals(t, "after 5 messages", totalsOf(t, st), map[string]store.Totals{
		"s1": {HoursCents: 325, KmCents: 1175, Records: 2},
	})
	cps := checkpointsOf(t, st)
	if cp := cps["s1"]; cp.Offset != 3 || cp.Message.Odometry.HoursTot != 103.25 || cp.FirstOffset != 0 {
		t.Errorf("s1 checkpoint %+v, want offset 3, hours 103.25, first offset 0", cp)
	}
	if cp, ok := cps["s2"]; !ok || cp.Partition != 1 || cp.Offset != 0 {
		t.Errorf("s2 checkpoint %+v (present %v), want partition 1 offset 0", cp, ok)
	}

	// A restart loads the checkpoints: the next delta is computed from them.
	p2, _ := newTestProcessor(t, st, lesson.Naive, nil)
	feed(t, p2, rec("s1", 0, 4, reading(t, "s1", 4, 10400, 101200)))
	sameTotals(t, "after restart", totalsOf(t, st), map[string]store.Totals{
		"s1": {HoursCents: 400, KmCents: 1200, Records: 3},
	})
	if s := p.Stats(); s.Processed != 5 || s.Records != 2 || s.Invalid != 0 {
		t.Errorf("stats %+v", s)
	}
}

// The article's warning, measured: a naive replay recomputes every delta
// after the first replayed message, because the first one overwrites the
// checkpoint with an older reading.
func TestNaiveReplayOverCountsExactly(t *testing.T) {
	for _, from := range []int{0, 4, 9} {
		t.Run(fmt.Sprintf("replay from offset %d", from), func(t *testing.T) {
			_, st := freshDB(t)
			log := series(t, "s1", 10)
			feed(t, newProcessorQuiet(t, st, lesson.Naive), log...)
			sameTotals(t, "first pass", totalsOf(t, st), map[string]store.Totals{"s1": deltas(9)})

			// Restart, then read again from an earlier offset (--reset
			// earliest with a fresh group, or an offset commit lost).
			p := newProcessorQuiet(t, st, lesson.Naive)
			res := feed(t, p, log[from])
			if res[0].Recorded {
				t.Errorf("first replayed message recorded %+v: its delta is negative", res[0].Usage)
			}
			if cp := checkpointsOf(t, st)["s1"]; cp.Offset != int64(from) {
				t.Errorf("checkpoint offset %d after replaying %d: the naive overwrite should regress it", cp.Offset, from)
			}
			feed(t, p, log[from+1:]...)
			overCount := deltas(int64(9 - from))
			want := deltas(9)
			want.HoursCents += overCount.HoursCents
			want.KmCents += overCount.KmCents
			want.Records += overCount.Records
			sameTotals(t, "after naive replay", totalsOf(t, st), map[string]store.Totals{"s1": want})
		})
	}
}

func TestGuardedReplayChangesNothing(t *testing.T) {
	_, st := freshDB(t)
	log := series(t, "s1", 10)
	feed(t, newProcessorQuiet(t, st, lesson.Guarded), log...)
	want := map[string]store.Totals{"s1": deltas(9)}
	sameTotals(t, "first pass", totalsOf(t, st), want)

	p := newProcessorQuiet(t, st, lesson.Guarded)
	for from := 9; from >= 0; from-- {
		for _, r := range feed(t, p, log[from:]...) {
			if r.Outcome != Replayed {
				t.Fatalf("replay from %d: %+v, want replayed", from, r)
			}
		}
	}
	sameTotals(t, "after every suffix replayed", totalsOf(t, st), want)
	if cp := checkpointsOf(t, st)["s1"]; cp.Offset != 9 {
		t.Errorf("checkpoint offset %d, want 9", cp.Offset)
	}
	if s := p.Stats(); s.Replayed != 55 || s.Records != 0 {
		t.Errorf("stats %+v, want 55 replayed and no record writes", s)
	}
}

func newProcessorQuiet(t *testing.T, st Store, mode lesson.Mode) *Processor {
	p, _ := newTestProcessor(t, st, mode, nil)
	return p
}

// A crash between the two writes, then the restart. Naive counts the
// crashed message's delta twice whether or not its offset was committed
// (the article's "non-atomic checkpoint and delta"); guarded counts it once.
func TestCrashBetweenWrites(t *testing.T) {
	log := series(t, "s1", 6)
	for _, tc := range []struct {
		mode      lesson.Mode
		point     lesson.CrashPoint
		resumeAt  int // the first offset read after the restart
		overCount int64
	}{
		{lesson.Naive, lesson.AfterDelta, 3, 1},      // offset not committed: the same delta again
		{lesson.Naive, lesson.AfterDelta, 4, 1},      // offset committed: next delta spans both
		{lesson.Naive, lesson.AfterCheckpoint, 3, 0}, // idempotent by luck: zero delta vs checkpoint
		{lesson.Guarded, lesson.AfterDelta, 3, 0},
		{lesson.Guarded, lesson.AfterDelta, 0, 0},
		{lesson.Guarded, lesson.AfterCheckpoint, 3, 0},
		{lesson.Guarded, lesson.AfterCheckpoint, 0, 0},
	} {
		t.Run(fmt.Sprintf("%s %s resume at %d", tc.mode, tc.point, tc.resumeAt), func(t *testing.T) {
			_, st := freshDB(t)
			arm := &CrashArm{}
			// Offsets 1, 2, 3 write deltas; offsets 0..3 write checkpoints.
			after := 3
			if tc.point == lesson.AfterCheckpoint {
				after = 4
			}
			if err := arm.Arm(tc.point, after); err != nil {
				t.Fatal(err)
			}
			p, sink := newTestProcessor(t, st, tc.mode, arm)
			feed(t, p, log[:3]...)
			if _, err := p.Handle(context.Background(), log[3]); !errors.Is(err, ErrCrashed) {
				t.Fatalf("offset 3: err %v, want the crash", err)
			}
			ev, ok := sink.first(status.CrashPoint)
			if !ok || ev.Point != string(tc.point) || ev.Offset != 3 || ev.Partition != 0 {
				t.Fatalf("crash event %+v (present %v)", ev, ok)
			}
			wantCP := int64(2)
			if tc.point == lesson.AfterCheckpoint {
				wantCP = 3
			}
			if cp := checkpointsOf(t, st)["s1"]; cp.Offset != wantCP {
				t.Fatalf("durable checkpoint at %d after the crash, want %d", cp.Offset, wantCP)
			}

			p2 := newProcessorQuiet(t, st, tc.mode)
			feed(t, p2, log[tc.resumeAt:]...)
			want := deltas(5)
			want.HoursCents += 125 * tc.overCount
			want.KmCents += 1050 * tc.overCount
			if tc.mode == lesson.Naive && tc.point == lesson.AfterDelta && tc.resumeAt == 3 {
				want.Records += tc.overCount // a second record for the same message
			}
			sameTotals(t, "after restart", totalsOf(t, st), map[string]store.Totals{"s1": want})
		})
	}
}

func TestBadInputSkippedAndCounted(t *testing.T) {
	for _, mode := range []lesson.Mode{lesson.Naive, lesson.Guarded} {
		t.Run(string(mode), func(t *testing.T) {
			_, st := freshDB(t)
			p, sink := newTestProcessor(t, st, mode, nil)
			recs := []Record{
				rec("s1", 0, 0, nil),
				rec("s1", 0, 1, []byte("{not json")),
				rec("s1", 0, 2, []byte(`{"sensor_id":"s1","timestamp":1767225600000}`)),
				rec("s1", 0, 3, reading(t, "s2", 0, 100, 100)), // key says s1
				rec("s1", 0, 4, reading(t, "s1", 0, 10000, 50000)),
				rec("s1", 0, 5, reading(t, "s1", 1, 9999, 50100)),  // hours went back
				rec("s1", 0, 6, reading(t, "s1", 2, 10100, 49999)), // km went back
				rec("s1", 0, 7, reading(t, "s1", 3, 10150, 50075)),
			}
			res := feed(t, p, recs...)
			for i, r := range res {
				want := Invalid
				if i == 4 || i == 7 {
					want = Applied
				}
				if r.Outcome != want {
					t.Errorf("offset %d: %v, want %v", i, r.Outcome, want)
				}
			}
			if s := p.Stats(); s.Invalid != 6 || s.Processed != 2 || s.Records != 1 {
				t.Errorf("stats %+v, want 6 invalid, 2 processed, 1 record", s)
			}
			var offsets []int64
			for _, ev := range sink.events() {
				if ev.Type == status.InvalidMessage {
					offsets = append(offsets, ev.Offset)
					if ev.Error == "" {
						t.Errorf("invalid_message event without error: %+v", ev)
					}
				}
			}
			if fmt.Sprint(offsets) != "[0 1 2 3 5 6]" {
				t.Errorf("invalid_message events at offsets %v, want [0 1 2 3 5 6]", offsets)
			}
			sameTotals(t, "totals", totalsOf(t, st), map[string]store.Totals{
				"s1": {HoursCents: 150, KmCents: 75, Records: 1},
			})
			if cp := checkpointsOf(t, st)["s1"]; cp.Offset != 7 {
				t.Errorf("checkpoint at %d, want 7", cp.Offset)
			}
		})
	}
}

// Guarded mode under random crashes at both points, commits that lag
// behind, rewinds, replays from earliest and redeliveries, over many random
// logs: the store must end exactly at the truth of one in-order pass.
func TestGuardedExactUnderCrashesAndReplays(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
			g := generate(t, rng, 5, 3, 6+rng.IntN(6))
			want := expectedTotals(t, g)
			_, st := freshDB(t)
			crashes := simulateGuarded(t, rng, st, g)
			t.Logf("%d crashes, %d messages", crashes, len(g.parts[0])+len(g.parts[1])+len(g.parts[2]))
			sameTotals(t, fmt.Sprintf("after %d crashes", crashes), totalsOf(t, st), want)
			cps := checkpointsOf(t, st)
			for id, last := range g.lastValid {
				if cp := cps[id]; cp.Partition != last.Partition || cp.Offset != last.Offset {
					t.Errorf("sensor %s checkpoint p%d@%d, want p%d@%d", id, cp.Partition, cp.Offset, last.Partition, last.Offset)
				}
			}
			// Finally every suffix of every partition once more: nothing changes.
			p := newProcessorQuiet(t, st, lesson.Guarded)
			for _, part := range g.parts {
				for from := range part {
					feed(t, p, part[from:]...)
				}
			}
			if s := p.Stats(); s.Records != 0 {
				t.Errorf("suffix replays wrote %d usage records, want 0", s.Records)
			}
			sameTotals(t, "after suffix replays", totalsOf(t, st), want)
		})
	}
}

// simulateGuarded consumes g like a guarded consumer group that keeps
// crashing: each incarnation starts from the committed offsets (or earlier:
// a fresh earliest group or a rewind), commits only some of the offsets it
// stored, and may die at an armed crash point. It returns the crash count.
func simulateGuarded(t *testing.T, rng *rand.Rand, st Store, g genLog) int {
	t.Helper()
	committed := make([]int, len(g.parts))
	crashes := 0
	for incarnation := 0; ; incarnation++ {
		if incarnation > 200 {
			t.Fatal("no crash-free incarnation in 200")
		}
		arm := &CrashArm{}
		if rng.IntN(10) < 7 {
			point := lesson.AfterDelta
			if rng.IntN(2) == 0 {
				point = lesson.AfterCheckpoint
			}
			if err := arm.Arm(point, 1+rng.IntN(6)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var writer Store = st
		if _, armed := arm.State(); !armed && rng.IntN(2) == 0 {
			// Batches only run unarmed: this incarnation dies mid-batch.
			d := &dyingStore{Store: st, cancel: cancel}
			d.writes.Store(int64(1 + rng.IntN(20)))
			writer = d
		}
		p, _ := newTestProcessor(t, writer, lesson.Guarded, arm)
		next := append([]int(nil), committed...)
		switch x := rng.IntN(10); {
		case x == 0: // a fresh group with --reset earliest
			clear(next)
		case x == 1: // one partition rewound
			i := rng.IntN(len(next))
			next[i] = rng.IntN(next[i] + 1)
		}
		crashed := false
		for !crashed {
			// A poll's batch: 1-5 deliveries, each the next record of a
			// partition (10% of them delivered twice).
			var batch []Record
			var took []int
			for range 1 + rng.IntN(5) {
				var open []int
				for i := range g.parts {
					if next[i] < len(g.parts[i]) {
						open = append(open, i)
					}
				}
				if len(open) == 0 {
					break
				}
				i := open[rng.IntN(len(open))]
				batch = append(batch, g.parts[i][next[i]])
				if rng.IntN(10) == 0 {
					batch = append(batch, g.parts[i][next[i]]) // redelivered
				}
				took = append(took, i)
				next[i]++
			}
			if len(batch) == 0 {
				break
			}
			if _, err := p.HandleBatch(ctx, batch); err != nil {
				if !errors.Is(err, ErrCrashed) && ctx.Err() == nil {
					t.Fatalf("handle %d records from p%d@%d: %v", len(batch), batch[0].Partition, batch[0].Offset, err)
				}
				crashed = true
				break
			}
			for _, i := range took {
				if rng.IntN(3) == 0 {
					committed[i] = next[i] // an auto commit happened (offsets stored)
				}
			}
		}
		if !crashed {
			return crashes
		}
		crashes++
	}
}

// dyingStore ends its incarnation (cancels its ctx) at its writes-th write,
// before making it: a batch's records may be in and some of its
// checkpoints, as a kill -9 in the middle of a batch leaves them.
type dyingStore struct {
	Store
	cancel context.CancelFunc
	writes atomic.Int64
}

func (d *dyingStore) dies() bool {
	if d.writes.Add(-1) >= 0 {
		return false
	}
	d.cancel()
	return true
}

func (d *dyingStore) SaveCheckpoint(ctx context.Context, cp store.Checkpoint) error {
	if d.dies() {
		return context.Canceled
	}
	return d.Store.SaveCheckpoint(ctx, cp)
}

func (d *dyingStore) AppendUsageBatch(ctx context.Context, sums map[string]store.Summary, recs []store.UsageRecord) (store.Batch, error) {
	if d.dies() {
		return store.Batch{}, context.Canceled
	}
	return d.Store.AppendUsageBatch(ctx, sums, recs)
}

// flakyStore fails some calls in front of the real store. With ackLost the
// failing write is applied first and only its answer is lost.
type flakyStore struct {
	Store
	failures atomic.Int64 // calls still to fail
	ackLost  bool
}

var errFlaky = errors.New("injected: connection reset")

func (f *flakyStore) fail() bool { return f.failures.Add(-1) >= 0 }

func (f *flakyStore) SaveCheckpoint(ctx context.Context, cp store.Checkpoint) error {
	if f.fail() {
		if f.ackLost {
			_ = f.Store.SaveCheckpoint(ctx, cp)
		}
		return errFlaky
	}
	return f.Store.SaveCheckpoint(ctx, cp)
}

func (f *flakyStore) AppendUsageBatch(ctx context.Context, sums map[string]store.Summary, recs []store.UsageRecord) (store.Batch, error) {
	if f.fail() {
		if f.ackLost {
			_, _ = f.Store.AppendUsageBatch(ctx, sums, recs)
		}
		return store.Batch{}, errFlaky
	}
	return f.Store.AppendUsageBatch(ctx, sums, recs)
}

func (f *flakyStore) AppendUsage(ctx context.Context, sum store.Summary, r store.UsageRecord) (store.Appended, error) {
	if f.fail() {
		if f.ackLost {
			_, _ = f.Store.AppendUsage(ctx, sum, r)
		}
		return store.Appended{}, errFlaky
	}
	return f.Store.AppendUsage(ctx, sum, r)
}

func TestStoreFailuresAreRetriedNotSkipped(t *testing.T) {
	for _, tc := range []struct {
		mode    lesson.Mode
		ackLost bool
		extra   int64 // records counted twice
	}{
		{lesson.Naive, false, 0},
		{lesson.Guarded, false, 0},
		{lesson.Guarded, true, 0},
		// Naive retries an insert whose answer was lost: each lost answer is
		// one more record (two here).
		{lesson.Naive, true, 2},
	} {
		t.Run(fmt.Sprintf("%s ack lost %v", tc.mode, tc.ackLost), func(t *testing.T) {
			_, st := freshDB(t)
			flaky := &flakyStore{Store: st, ackLost: tc.ackLost}
			p, sink := newTestProcessor(t, flaky, tc.mode, nil)
			log := series(t, "s1", 4)
			feed(t, p, log[:2]...)
			flaky.failures.Store(2) // the insert of offset 2's delta fails twice
			feed(t, p, log[2:]...)
			want := deltas(3)
			want.HoursCents += 125 * tc.extra
			want.KmCents += 1050 * tc.extra
			want.Records += tc.extra
			sameTotals(t, "totals", totalsOf(t, st), map[string]store.Totals{"s1": want})
			if s := p.Stats(); s.StoreErrors != 2 {
				t.Errorf("store errors %d, want 2", s.StoreErrors)
			}
			var retrying, connected int
			for _, ev := range sink.events() {
				switch {
				case ev.Type == status.Retrying && ev.Endpoint == "mongo" && strings.Contains(ev.Error, "injected"):
					retrying++
				case ev.Type == status.Connected && ev.Endpoint == "mongo":
					connected++
				}
			}
			if retrying != 2 || connected != 1 {
				t.Errorf("%d retrying and %d connected events, want 2 and 1", retrying, connected)
			}
		})
	}
}

// A store that never comes back: Handle waits (never skips) until the
// shutdown, and the record is left undone for the next incarnation.
func TestStoreDownUntilShutdown(t *testing.T) {
	_, st := freshDB(t)
	flaky := &flakyStore{Store: st}
	p, sink := newTestProcessor(t, flaky, lesson.Guarded, nil)
	log := series(t, "s1", 3)
	feed(t, p, log[:2]...)
	flaky.failures.Store(1 << 40)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Handle(ctx, log[2])
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().StoreErrors < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no retries within 10s")
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
	select {
	case err := <-done:
		t.Fatalf("Handle returned %v while the store was down", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Handle returned %v after shutdown, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Handle did not return after shutdown")
	}
	if cp, _ := p.Checkpoint("s1"); cp.Offset != 1 {
		t.Errorf("in-memory checkpoint at %d, want 1 (offset 2 not applied)", cp.Offset)
	}
	if _, ok := sink.first(status.Retrying); !ok {
		t.Error("no retrying event")
	}
	sameTotals(t, "totals", totalsOf(t, st), map[string]store.Totals{"s1": deltas(1)})
}

// The store operations the guarded mode stands on, checked on FerretDB.
func TestStoreGuardPrimitives(t *testing.T) {
	_, st := freshDB(t)
	ctx := context.Background()
	// Effect identities hold under concurrent writers that append the same
	// effects in the same order, each from its own summary.
	var inserted atomic.Int64
	var wg sync.WaitGroup
	sums := make([]store.Summary, 6)
	for w := range sums {
		wg.Go(func() {
			for i := range 40 {
				app, err := st.AppendUsage(ctx, sums[w], store.UsageRecord{Effect: store.EffectID(testTopic, 0, int64(i)),
					Offset: int64(i), Usage: telemetry.Usage{SensorID: "s9", DeltaHours: 0.25, DeltaKm: 1}})
				if err != nil {
					t.Error(err)
					return
				}
				sums[w] = app.Summary
				if app.New {
					inserted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	recorded, err := st.UsageTotals(ctx) // no checkpoints here, so no summaries to compare
	if err != nil {
		t.Fatal(err)
	}
	if got := recorded["s9"]; inserted.Load() != 40 || got.Records != 40 || got.HoursCents != 1000 {
		t.Errorf("6 writers x 40 identities: %d inserted, totals %+v; want 40 records", inserted.Load(), got)
	}
	for w, sum := range sums {
		if sum.Records != 40 || sum.HoursCents != 1000 || sum.KmCents != 4000 || sum.Through.Offset != 39 {
			t.Errorf("writer %d ended with summary %+v, want the 40 records", w, sum)
		}
	}
}

// A zombie owner (revoked but not yet aware) finishes an in-flight message
// after the new owner moved on. Its duplicate record is a no-op; its
// checkpoint write moves the checkpoint back (an upsert by _id), and the
// next owner must still not compute a delta from the stale reading: it
// resumes from the owner's record after it, whose reading it carries.
func TestZombieWriteDoesNotCountTwice(t *testing.T) {
	_, st := freshDB(t)
	log := series(t, "s1", 10)
	zombie := newProcessorQuiet(t, st, lesson.Guarded)
	feed(t, zombie, log[:6]...) // applied 0..5, committed up to 4
	owner := newProcessorQuiet(t, st, lesson.Guarded)
	feed(t, owner, log[4:8]...) // from the committed offset: 4, 5 skipped, 6, 7 applied
	res := feed(t, zombie, log[6])
	if res[0].Inserted {
		t.Error("zombie's record for offset 6 was inserted again")
	}
	if cp := checkpointsOf(t, st)["s1"]; cp.Offset != 6 {
		t.Fatalf("checkpoint at %d after the zombie write, want 6 (moved back: the case this test is about)", cp.Offset)
	}
	next := newProcessorQuiet(t, st, lesson.Guarded) // the owner died after committing 8
	if cp, _ := next.Checkpoint("s1"); cp.Offset != 7 || cp.Summary.Records != 7 {
		t.Fatalf("resumed at offset %d with %d records, want 7 and 7", cp.Offset, cp.Summary.Records)
	}
	feed(t, next, log[8:]...)
	sameTotals(t, "totals", totalsOf(t, st), map[string]store.Totals{"s1": deltas(9)})
}

// slowStore delays every usage insert by delay before the real store.
type slowStore struct {
	Store
	delay time.Duration
}

func (s *slowStore) AppendUsage(ctx context.Context, sum store.Summary, r store.UsageRecord) (store.Appended, error) {
	if err := s.wait(ctx); err != nil {
		return store.Appended{}, err
	}
	return s.Store.AppendUsage(ctx, sum, r)
}

func (s *slowStore) AppendUsageBatch(ctx context.Context, sums map[string]store.Summary, recs []store.UsageRecord) (store.Batch, error) {
	if err := s.wait(ctx); err != nil {
		return store.Batch{}, err
	}
	return s.Store.AppendUsageBatch(ctx, sums, recs)
}

func (s *slowStore) wait(ctx context.Context) error {
	select {
	case <-time.After(s.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Store trouble is reported at once: a failed call as "store unreachable",
// a call not answered within SlowAfter as "store slow" (while it is still
// running), and a retry of a failed call is not "slow" on top of that.
func TestStoreTroubleReported(t *testing.T) {
	_, st := freshDB(t)
	var mu sync.Mutex
	var got []string
	note := func(r string) { mu.Lock(); got = append(got, r); mu.Unlock() }
	reasons := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }

	flaky := &flakyStore{Store: st}
	p, _ := newTestProcessor(t, flaky, lesson.Guarded, nil)
	p.cfg.OnStoreTrouble = note
	log := series(t, "s1", 4)
	feed(t, p, log[:2]...)
	flaky.failures.Store(2)
	feed(t, p, log[2])
	if r := reasons(); len(r) != 2 || !strings.HasPrefix(r[0], "store unreachable: insert usage") {
		t.Fatalf("after 2 failures: %q", r)
	}

	got = nil
	slow := &slowStore{Store: st, delay: 300 * time.Millisecond}
	p2, _ := newTestProcessor(t, slow, lesson.Guarded, nil)
	p2.cfg.OnStoreTrouble, p2.cfg.SlowAfter = note, 100*time.Millisecond
	feed(t, p2, log[3])
	if r := reasons(); len(r) != 1 || !strings.HasPrefix(r[0], "store slow: insert usage not answered within 100ms") {
		t.Fatalf("slow insert: %q", r)
	}
	sameTotals(t, "totals", totalsOf(t, st), map[string]store.Totals{"s1": deltas(3)})
}

// A new sensor's checkpoint is written at its last message of the batch;
// the window it is responsible for (what the audit compares) still starts
// at its first message.
func TestBatchKeepsTheFirstMessage(t *testing.T) {
	_, st := freshDB(t)
	p := newProcessorQuiet(t, st, lesson.Guarded)
	log := series(t, "s1", 6)
	if _, err := p.HandleBatch(context.Background(), log[2:]); err != nil {
		t.Fatal(err)
	}
	cp := checkpointsOf(t, st)["s1"]
	if cp.Offset != 5 || cp.FirstOffset != 2 || cp.FirstTimestamp != log2ts(t, log[2]) {
		t.Fatalf("checkpoint at %d, first %d@%d; want 5, first 2 at its timestamp", cp.Offset, cp.FirstOffset, cp.FirstTimestamp)
	}
	sameTotals(t, "totals", totalsOf(t, st), map[string]store.Totals{"s1": deltas(3)})
}

func log2ts(t *testing.T, r Record) int64 {
	t.Helper()
	m, err := telemetry.Decode(r.Key, r.Value)
	if err != nil {
		t.Fatal(err)
	}
	return m.Timestamp
}
