package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func connect(t *testing.T) *store.Store {
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
	return st
}

// The totals and the furthest record come from one read: a naive replay
// (records again at lower offsets) adds to the sums without moving Through.
func TestUsageCoverage(t *testing.T) {
	st := connect(t)
	ctx := context.Background()
	add := func(id string, p int32, off int64, h, km float64) {
		t.Helper()
		rec := store.UsageRecord{Usage: telemetry.Usage{SensorID: id, Date: "2026-11-30", DeltaHours: h, DeltaKm: km},
			Partition: p, Offset: off}
		if err := st.InsertUsage(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	add("a", 1, 10, 0.1, 0.2)
	add("a", 1, 12, 0.2, 0.01)
	add("b", 2, 5, 1.25, 3)
	add("a", 1, 11, 0.1, 0.1) // replayed after offset 12
	cov, err := st.UsageCoverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]store.Covered{
		"a": {Totals: store.Totals{HoursCents: 40, KmCents: 31, Records: 3}, Through: store.Position{Partition: 1, Offset: 12}, Partitions: 1},
		"b": {Totals: store.Totals{HoursCents: 125, KmCents: 300, Records: 1}, Through: store.Position{Partition: 2, Offset: 5}, Partitions: 1},
	}
	if len(cov) != len(want) {
		t.Fatalf("coverage %+v", cov)
	}
	for id, w := range want {
		if cov[id] != w {
			t.Errorf("%s: %+v, want %+v", id, cov[id], w)
		}
	}
	// A sensor whose records came from two partitions says so.
	add("b", 0, 40, 0.5, 0)
	cov, err = st.UsageCoverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := cov["b"]; c.Partitions != 2 || c.Through != (store.Position{Partition: 0, Offset: 40}) {
		t.Fatalf("two partitions: %+v", c)
	}
	tot, err := st.UsageTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tot["a"] != want["a"].Totals {
		t.Fatalf("UsageTotals %+v", tot)
	}
}
