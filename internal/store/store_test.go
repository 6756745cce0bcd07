package store_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func connect(t testing.TB) (*store.Store, string) {
	t.Helper()
	uri := embeddedtest.StartStore(t, "coverage")
	ctx := context.Background()
	st, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(ctx) })
	deadline := time.Now().Add(30 * time.Second)
	for st.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("store did not answer")
		}
		time.Sleep(50 * time.Millisecond) // waiting for a listener, not synchronising with a result
	}
	return st, uri
}

// writer appends records and checkpoints them as consumer-usage does.
type writer struct {
	t    testing.TB
	st   *store.Store
	sums map[string]store.Summary
	n    int
}

func newWriter(t testing.TB, st *store.Store) *writer {
	return &writer{t: t, st: st, sums: map[string]store.Summary{}}
}

// add appends one record; checkpoint=false leaves it an orphan, as a
// writer killed between its two writes does.
func (w *writer) add(id string, p int32, off int64, h, km float64, checkpoint bool) store.Appended {
	w.t.Helper()
	ctx := context.Background()
	w.n++
	rec := store.UsageRecord{Usage: telemetry.Usage{SensorID: id, Date: "2026-11-30", DeltaHours: h, DeltaKm: km},
		Partition: p, Offset: off, Effect: store.WriteID()}
	app, err := w.st.AppendUsage(ctx, w.sums[id], rec)
	if err != nil {
		w.t.Fatal(err)
	}
	if checkpoint {
		w.sums[id] = app.Summary
		if err := w.st.SaveCheckpoint(ctx, store.Checkpoint{SensorID: id, Partition: p, Offset: off, Summary: app.Summary}); err != nil {
			w.t.Fatal(err)
		}
	}
	return app
}

func coverages(t testing.TB, st *store.Store) (summarized, recorded map[string]store.Covered) {
	t.Helper()
	ctx := context.Background()
	summarized, err := st.UsageCoverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err = st.RecordedCoverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return summarized, recorded
}

func sameCoverage(t testing.TB, what string, got, want map[string]store.Covered) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %+v, want %+v", what, got, want)
		return
	}
	for id, w := range want {
		if !reflect.DeepEqual(got[id], w) {
			t.Errorf("%s: %s %+v, want %+v", what, id, got[id], w)
		}
	}
}

// The summaries say what a scan of the records says: a naive replay
// (records again at lower offsets) adds to the sums without moving Through.
func TestSummariesAreTheRecords(t *testing.T) {
	st, _ := connect(t)
	w := newWriter(t, st)
	w.add("a", 1, 10, 0.1, 0.2, true)
	w.add("a", 1, 12, 0.2, 0.01, true)
	w.add("b", 2, 5, 1.25, 3, true)
	w.add("a", 1, 11, 0.1, 0.1, true) // replayed after offset 12
	want := map[string]store.Covered{
		"a": {Totals: store.Totals{HoursCents: 40, KmCents: 31, Records: 3}, Through: store.Position{Partition: 1, Offset: 12}, Partitions: 1,
			Furthest: []store.Position{{Partition: 1, Offset: 12}}},
		"b": {Totals: store.Totals{HoursCents: 125, KmCents: 300, Records: 1}, Through: store.Position{Partition: 2, Offset: 5}, Partitions: 1,
			Furthest: []store.Position{{Partition: 2, Offset: 5}}},
	}
	sum, rec := coverages(t, st)
	sameCoverage(t, "summaries", sum, want)
	sameCoverage(t, "records", rec, want)

	// A sensor whose records came from two partitions says so.
	w.add("b", 0, 40, 0.5, 0, true)
	sum, rec = coverages(t, st)
	if c := sum["b"]; c.Partitions != 2 || c.Through != (store.Position{Partition: 0, Offset: 40}) ||
		!reflect.DeepEqual(c.Furthest, []store.Position{{Partition: 0, Offset: 40}, {Partition: 2, Offset: 5}}) {
		t.Fatalf("two partitions: %+v", c)
	}
	sameCoverage(t, "records after b@0", rec, sum)
	tot, err := st.UsageTotals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tot["a"] != want["a"].Totals {
		t.Fatalf("UsageTotals %+v", tot)
	}
}

// A record whose checkpoint write never happened (its writer died in
// between) is folded before anything is written after it: by the next
// writer's resume, and by an append from the stale summary.
func TestOrphansAreFolded(t *testing.T) {
	st, _ := connect(t)
	ctx := context.Background()
	w := newWriter(t, st)
	w.add("a", 0, 1, 1, 10, true)
	w.add("a", 0, 2, 2, 20, false) // orphan at seq 2
	sum, rec := coverages(t, st)
	if sum["a"].Records != 1 || rec["a"].Records != 2 {
		t.Fatalf("before the resume: summary %+v records %+v", sum["a"], rec["a"])
	}
	cps, err := st.ResumeCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := cps["a"].Summary.Covered(); !reflect.DeepEqual(got, rec["a"]) {
		t.Fatalf("resumed summary %+v, want the records %+v", got, rec["a"])
	}

	// A writer that did not resume appends from the stale summary: the
	// orphan is folded, and its own record takes the next seq.
	app := w.add("a", 0, 2, 2, 20, true) // the naive replay of offset 2
	if !app.New || app.Summary.Records != 3 || app.Summary.HoursCents != 500 {
		t.Fatalf("append over an orphan: %+v", app)
	}
	sum, rec = coverages(t, st)
	sameCoverage(t, "after the replay", sum, rec)

	// The same effect twice (a retry after a lost answer, a guarded
	// replay) is one record.
	same := store.UsageRecord{Usage: telemetry.Usage{SensorID: "a", DeltaHours: 0.5}, Partition: 0, Offset: 3, Effect: "t/0/3"}
	first, err := st.AppendUsage(ctx, w.sums["a"], same)
	if err != nil || !first.New {
		t.Fatalf("first append: %+v %v", first, err)
	}
	again, err := st.AppendUsage(ctx, w.sums["a"], same)
	if err != nil || again.New || again.Summary.Records != first.Summary.Records || again.Summary.HoursCents != first.Summary.HoursCents {
		t.Fatalf("second append of one effect: %+v %v, first %+v", again, err, first)
	}
	if _, err := st.AppendUsage(ctx, w.sums["a"], store.UsageRecord{Usage: telemetry.Usage{SensorID: "a"}}); err == nil {
		t.Fatal("a record without an effect identity was appended")
	}
}

// A store written by a version that kept no summaries: the answer is the
// scan of the records (exact) and a resuming writer rebuilds the summaries.
func TestUnsummarizedStoreIsRebuilt(t *testing.T) {
	st, uri := connect(t)
	ctx := context.Background()
	c, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	db := c.Database("coverage")
	for i, off := range []int64{4, 7} {
		if _, err := db.Collection("usage").InsertOne(ctx, bson.D{{Key: "sensor_id", Value: "old"},
			{Key: "delta_hours", Value: 0.1 * float64(i+1)}, {Key: "delta_km", Value: 1.5},
			{Key: "partition", Value: int32(2)}, {Key: "offset", Value: off}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Collection("checkpoints").InsertOne(ctx, bson.D{{Key: "_id", Value: "old"},
		{Key: "partition", Value: int32(2)}, {Key: "offset", Value: int64(7)}}); err != nil {
		t.Fatal(err)
	}
	want := store.Covered{Totals: store.Totals{HoursCents: 30, KmCents: 300, Records: 2},
		Through: store.Position{Partition: 2, Offset: 7}, Partitions: 1, Furthest: []store.Position{{Partition: 2, Offset: 7}}}
	sum, _ := coverages(t, st)
	if !reflect.DeepEqual(sum["old"], want) {
		t.Fatalf("unsummarized answer %+v, want %+v", sum["old"], want)
	}
	cps, err := st.ResumeCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := cps["old"].Summary.Covered(); !reflect.DeepEqual(got, want) || cps["old"].Unsummarized {
		t.Fatalf("rebuilt summary %+v (unsummarized %v), want %+v", got, cps["old"].Unsummarized, want)
	}
}

// A batch is one ordered insert; where it meets a seq already taken (here
// an orphan of another writer) the rest goes record by record, folding
// what it finds; the same batch again (a retry after a lost answer) is a
// no-op. The summaries end equal to the records either way.
func TestBatchAppend(t *testing.T) {
	st, _ := connect(t)
	ctx := context.Background()
	rec := func(id string, off int64) store.UsageRecord {
		m := telemetry.Message{SensorID: id, Timestamp: off}
		return store.UsageRecord{Usage: telemetry.Usage{SensorID: id, Date: "2026-11-30", DeltaHours: 0.25, DeltaKm: float64(off)},
			Partition: 0, Offset: off, Effect: store.EffectID("t", 0, off), Reading: &m}
	}
	checkpoint := func(b store.Batch, last map[string]int64) {
		t.Helper()
		for id, sum := range b.Summaries {
			if err := st.SaveCheckpoint(ctx, store.Checkpoint{SensorID: id, Offset: last[id], Summary: sum}); err != nil {
				t.Fatal(err)
			}
		}
	}
	first, err := st.AppendUsageBatch(ctx, map[string]store.Summary{}, []store.UsageRecord{rec("a", 1), rec("b", 2), rec("a", 3)})
	if err != nil || first.Summaries["a"].Records != 2 || first.Summaries["b"].Records != 1 || !first.New[0] || !first.New[1] || !first.New[2] {
		t.Fatalf("first batch: %+v %v", first, err)
	}
	checkpoint(first, map[string]int64{"a": 3, "b": 2})

	// Another writer's record at a#3, never checkpointed.
	if _, err := st.AppendUsage(ctx, first.Summaries["a"], rec("a", 4)); err != nil {
		t.Fatal(err)
	}
	batch := []store.UsageRecord{rec("b", 5), rec("a", 6), rec("b", 7), rec("a", 8)}
	second, err := st.AppendUsageBatch(ctx, first.Summaries, batch)
	if err != nil {
		t.Fatal(err)
	}
	if a := second.Summaries["a"]; a.Records != 5 || a.Through.Offset != 8 || second.Summaries["b"].Records != 3 {
		t.Fatalf("second batch summaries %+v", second.Summaries)
	}
	if got := second.New; !got[0] || !got[1] || !got[2] || !got[3] {
		t.Fatalf("second batch new %v, want all new", got)
	}
	again, err := st.AppendUsageBatch(ctx, first.Summaries, batch)
	if err != nil || again.New[0] || again.New[1] || again.New[2] || again.New[3] {
		t.Fatalf("the same batch again: %+v %v", again, err)
	}
	for id, sum := range second.Summaries {
		if !reflect.DeepEqual(again.Summaries[id].Covered(), sum.Covered()) {
			t.Errorf("%s: again %+v, first time %+v", id, again.Summaries[id], sum)
		}
	}
	checkpoint(first, map[string]int64{"a": 3, "b": 2}) // a late writer moves both back

	// The resume folds the records after the checkpoints and starts each
	// sensor's next delta at the furthest record's reading.
	cps, err := st.ResumeCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for id, off := range map[string]int64{"a": 8, "b": 7} {
		if cp := cps[id]; cp.Offset != off || cp.Message.Timestamp != off || !reflect.DeepEqual(cp.Summary.Covered(), second.Summaries[id].Covered()) {
			t.Errorf("%s resumed at %d (reading %d) with %+v, want %d and %+v", id, cp.Offset, cp.Message.Timestamp,
				cp.Summary, off, second.Summaries[id])
		}
	}
	sum, recorded := coverages(t, st)
	sameCoverage(t, "after the resume", sum, recorded)
}

// A record found at its seq with the same effect is the write's own when it
// carries the write's identity (an ordered insert that FerretDB applied past
// a duplicate key, a retry whose answer was lost), a second effect when it
// does not.
func TestOwnRecordIsNotASecondEffect(t *testing.T) {
	st, _ := connect(t)
	ctx := context.Background()
	rec := func(id string, off int64, write string) store.UsageRecord {
		return store.UsageRecord{Usage: telemetry.Usage{SensorID: id, DeltaHours: 0.25, DeltaKm: 1},
			Offset: off, Effect: store.EffectID("t", 0, off), Write: write}
	}
	// Another write recorded c@1 first.
	if _, err := st.AppendUsage(ctx, store.Summary{}, rec("c", 1, "other")); err != nil {
		t.Fatal(err)
	}
	b, err := st.AppendUsageBatch(ctx, map[string]store.Summary{}, []store.UsageRecord{rec("c", 1, "mine"), rec("d", 2, "mine"), rec("d", 3, "mine")})
	if err != nil {
		t.Fatal(err)
	}
	if b.New[0] || !b.New[1] || !b.New[2] {
		t.Fatalf("new %v, want [false true true]: c@1 is the other write's, d's are this one's", b.New)
	}
	// The same write again (its answer lost): its own records, not refused.
	again, err := st.AppendUsageBatch(ctx, map[string]store.Summary{}, []store.UsageRecord{rec("d", 2, "mine"), rec("d", 3, "mine")})
	if err != nil || !again.New[0] || !again.New[1] {
		t.Fatalf("retry: new %v (%v), want both its own", again.New, err)
	}
	// Another write of the same effects: refused.
	other, err := st.AppendUsageBatch(ctx, map[string]store.Summary{}, []store.UsageRecord{rec("d", 2, "third"), rec("d", 3, "third")})
	if err != nil || other.New[0] || other.New[1] {
		t.Fatalf("another write: new %v (%v), want both refused", other.New, err)
	}
	if tot, err := st.UsageTotals(ctx); err != nil || tot["c"].Records != 1 || tot["d"].Records != 2 {
		t.Fatalf("totals %+v %v, want one record per effect", tot, err)
	}
}

// UsageRecordsFrom reads exactly the asked seqs of each sensor, in order,
// with their writer and base reading, and not an orphan past them.
func TestUsageRecordsFrom(t *testing.T) {
	st, _ := connect(t)
	ctx := context.Background()
	var sum store.Summary
	for i := range int64(4) {
		rec := store.UsageRecord{Usage: telemetry.Usage{SensorID: "s", DeltaHours: 0.25, DeltaKm: 1.5},
			Partition: 2, Offset: 10 + i, Effect: store.WriteID(), Writer: "w@x", BaseTimestamp: 100 + i}
		app, err := st.AppendUsage(ctx, sum, rec)
		if err != nil {
			t.Fatal(err)
		}
		sum = app.Summary
	}
	got, err := st.UsageRecordsFrom(ctx, map[string]int64{"s": 1}, map[string]int64{"s": 3, "none": 0})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.SensorRecord{
		{Seq: 2, Partition: 2, Offset: 11, HoursCents: 25, KmCents: 150, Writer: "w@x", BaseTimestamp: 101},
		{Seq: 3, Partition: 2, Offset: 12, HoursCents: 25, KmCents: 150, Writer: "w@x", BaseTimestamp: 102},
	}
	if len(got) != 1 || !slices.Equal(got["s"], want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
}
