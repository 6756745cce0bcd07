package store_test

import (
	"context"
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
		if got[id] != w {
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
		"a": {Totals: store.Totals{HoursCents: 40, KmCents: 31, Records: 3}, Through: store.Position{Partition: 1, Offset: 12}, Partitions: 1},
		"b": {Totals: store.Totals{HoursCents: 125, KmCents: 300, Records: 1}, Through: store.Position{Partition: 2, Offset: 5}, Partitions: 1},
	}
	sum, rec := coverages(t, st)
	sameCoverage(t, "summaries", sum, want)
	sameCoverage(t, "records", rec, want)

	// A sensor whose records came from two partitions says so.
	w.add("b", 0, 40, 0.5, 0, true)
	sum, rec = coverages(t, st)
	if c := sum["b"]; c.Partitions != 2 || c.Through != (store.Position{Partition: 0, Offset: 40}) {
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
	if got := cps["a"].Summary.Covered(); got != rec["a"] {
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
		Through: store.Position{Partition: 2, Offset: 7}, Partitions: 1}
	sum, _ := coverages(t, st)
	if sum["old"] != want {
		t.Fatalf("unsummarized answer %+v, want %+v", sum["old"], want)
	}
	cps, err := st.ResumeCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := cps["old"].Summary.Covered(); got != want || cps["old"].Unsummarized {
		t.Fatalf("rebuilt summary %+v (unsummarized %v), want %+v", got, cps["old"].Unsummarized, want)
	}
}
