package audit

import (
	"math/rand/v2"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// usageSim is consumer-usage's naive loop, written again from the seed
// (delta against the in-memory checkpoint, insert, overwrite the
// checkpoint), independent of the ledger: what the store would hold.
type usageSim struct {
	last    map[string]record // in-memory checkpoint
	first   map[string]store.Checkpoint
	covered map[string]store.Covered
	parts   map[string]map[int32]bool
	// recs: every usage record per sensor, in seq order.
	recs map[string][]store.SensorRecord
}

func newUsageSim() *usageSim {
	return &usageSim{last: map[string]record{}, first: map[string]store.Checkpoint{},
		covered: map[string]store.Covered{}, parts: map[string]map[int32]bool{}, recs: map[string][]store.SensorRecord{}}
}

// handle applies one record; skipRecord drops the usage record a delta
// would have written (a lost write) while the checkpoint still moves.
func (u *usageSim) handle(r record, skipRecord bool) {
	if r.err != nil {
		return
	}
	m := r.msg
	prev, known := u.last[m.SensorID]
	if known && prev.partition == r.partition && r.offset > prev.offset &&
		telemetry.CheckSuccessorAfter(prev.msg, m, r.offset-prev.offset) != nil {
		return
	}
	if known {
		if d, rec := telemetry.Delta(prev.msg, m); rec && !skipRecord {
			u.insert(m.SensorID, r.partition, r.offset, d)
		}
	}
	if !known {
		u.first[m.SensorID] = store.Checkpoint{SensorID: m.SensorID, FirstPartition: r.partition, FirstOffset: r.offset}
	}
	u.last[m.SensorID] = r
}

func (u *usageSim) insert(id string, p int32, off int64, d telemetry.Usage) {
	c := u.covered[id]
	c.HoursCents += store.Cents(d.DeltaHours)
	c.KmCents += store.Cents(d.DeltaKm)
	c.Records++
	if c.Records == 1 || off > c.Through.Offset {
		c.Through = store.Position{Partition: p, Offset: off}
	}
	if u.parts[id] == nil {
		u.parts[id] = map[int32]bool{}
	}
	u.parts[id][p] = true
	c.Partitions = len(u.parts[id])
	u.covered[id] = c
	u.recs[id] = append(u.recs[id], store.SensorRecord{Seq: c.Records, Partition: p, Offset: off,
		HoursCents: store.Cents(d.DeltaHours), KmCents: store.Cents(d.DeltaKm)})
}

// keyedTopic is randomTopic without the strays (every sensor in the
// partition its key decides, as the producer writes it) and without
// odometers going back: consumer-usage joining at such a message would
// take it as its reference where the audit rejects it, a different
// question from the cut this file is about.
func keyedTopic(t *testing.T, seed uint64, n int) []record {
	var out []record
	last := map[string]telemetry.Message{}
	for _, r := range randomTopic(t, rand.New(rand.NewPCG(seed, 7)), n) {
		id := string(r.key)
		if r.err == nil {
			id = r.msg.SensorID
		}
		if id != "" && int32(len(id)+int(id[len(id)-1]))%3 != r.partition {
			continue
		}
		if r.err == nil {
			if prev, ok := last[id]; ok && telemetry.CheckSuccessor(prev, r.msg) != nil {
				continue
			}
			last[id] = r.msg
		}
		out = append(out, r)
	}
	return out
}

func ledgerOf(recs []record) *Ledger {
	l := NewLedger()
	for _, r := range recs {
		l.Track(r.partition)
		l.Add(r.partition, r.offset, r.key, r.value)
	}
	return l
}

// Whenever the store is read, between any two writes, the totals equal the
// audit's usage over exactly the records read: a steady state is exact at
// every poll, whatever the audit has read beyond.
func TestExpectedOverEveryCutIsExact(t *testing.T) {
	for seed := range uint64(4) {
		recs := keyedTopic(t, seed, 1500)
		truth := ledgerOf(recs).Snapshot()
		sim := newUsageSim()
		start := len(recs) / 5 // consumer-usage joined with reset latest
		for i := start; i < len(recs); i++ {
			sim.handle(recs[i], false)
			cut := ExpectedForCut(truth, sim.covered, sim.first)
			if len(cut) != len(sim.first) {
				t.Fatalf("seed %d: cut of %d sensors, %d checkpointed", seed, len(cut), len(sim.first))
			}
			for id, c := range cut {
				if c.State != Expected || c.Expected != c.Totals {
					t.Fatalf("seed %d after record %d: %s %v expected %+v, recorded %+v", seed, i, id, c.State, c.Expected, c.Totals)
				}
			}
		}
		if len(sim.covered) == 0 {
			t.Fatalf("seed %d: nothing recorded, nothing checked", seed)
		}
	}
}

// steady is one sensor, partition 0, offsets 0..9, moving one hour and two
// km per message (offset 4 is idle); consumer-usage first checkpointed
// offset 1.
func steady(t *testing.T) []record {
	var recs []record
	h, km := 100.0, 500.0
	for off := range int64(10) {
		if off != 4 {
			h, km = h+1, km+2
		}
		v := encode(t, "s", 1_700_000_000_000+off*1000, h, km)
		m, err := telemetry.Decode([]byte("s"), v)
		recs = append(recs, record{partition: 0, offset: off, key: []byte("s"), value: v, msg: m, err: err})
	}
	return recs
}

func TestExpectedOverAuditBehindIsNotADrift(t *testing.T) {
	recs := steady(t)
	sim := newUsageSim()
	for _, r := range recs[1:] {
		sim.handle(r, false)
	}
	// The audit has read offsets 0..6; the records go through 9.
	truth := ledgerOf(recs[:7]).Snapshot()
	w := Window{First: store.Position{Partition: 0, Offset: 1}, Covered: sim.covered["s"]}
	if _, state := truth.ExpectedOver("s", w); state != AuditBehind {
		t.Fatalf("audit behind the records: %v", state)
	}
	cut := ExpectedForCut(truth, sim.covered, sim.first)
	if c := cut["s"]; c.State != AuditBehind || c.Expected != (store.Totals{}) {
		t.Fatalf("cut %+v", c)
	}
	// Once it has read the furthest record, the verdict is exact.
	truth = ledgerOf(recs).Snapshot()
	got, state := truth.ExpectedOver("s", w)
	if state != Expected || got != w.Covered.Totals {
		t.Fatalf("caught up: %v %+v, recorded %+v", state, got, w.Covered.Totals)
	}
	if want := (store.Totals{HoursCents: 700, KmCents: 1400, Records: 7}); got != want {
		t.Fatalf("expected %+v, want %+v", got, want)
	}
}

func TestExpectedOverNaiveReplayOverCounts(t *testing.T) {
	recs := steady(t)
	sim := newUsageSim()
	for _, r := range recs[1:] {
		sim.handle(r, false)
	}
	// Restarted naive with reset earliest: the topic is read again from
	// offset 0 against the checkpoint of offset 9.
	for _, r := range recs {
		sim.handle(r, false)
	}
	truth := ledgerOf(recs).Snapshot()
	c := sim.covered["s"]
	if c.Through.Offset != 9 {
		t.Fatalf("replay moved the furthest record: %+v", c.Through)
	}
	got, state := truth.ExpectedOver("s", Window{First: store.Position{Partition: 0, Offset: 1}, Covered: c})
	if state != Expected {
		t.Fatalf("state %v", state)
	}
	// Deltas of offsets 2..9 were recorded twice (offset 1's too: its
	// predecessor 0 is replayed as the reference); the window is 2..9.
	over := c.HoursCents - got.HoursCents
	if over != 800 || c.KmCents-got.KmCents != 1600 {
		t.Fatalf("over-count %d h-cents %d km-cents (recorded %+v, expected %+v)", over, c.KmCents-got.KmCents, c.Totals, got)
	}
	// Records only at or before the first checkpoint: nothing expected.
	early := store.Covered{Totals: store.Totals{HoursCents: 100, KmCents: 200, Records: 1},
		Through: store.Position{Partition: 0, Offset: 1}, Partitions: 1}
	if got, state := truth.ExpectedOver("s", Window{First: store.Position{Partition: 0, Offset: 1}, Covered: early}); state != Expected || got != (store.Totals{}) {
		t.Fatalf("window before the first checkpoint: %v %+v", state, got)
	}
}

func TestExpectedOverMissingRecordIsLost(t *testing.T) {
	recs := steady(t)
	sim := newUsageSim()
	for _, r := range recs[1:] {
		sim.handle(r, r.offset == 5) // the delta of offset 5 is never saved
	}
	truth := ledgerOf(recs).Snapshot()
	c := sim.covered["s"]
	got, state := truth.ExpectedOver("s", Window{First: store.Position{Partition: 0, Offset: 1}, Covered: c})
	if state != Expected || got.HoursCents-c.HoursCents != 100 || got.KmCents-c.KmCents != 200 || got.Records-c.Records != 1 {
		t.Fatalf("lost delta: %v expected %+v, recorded %+v", state, got, c.Totals)
	}
}

func TestExpectedForCutWindows(t *testing.T) {
	recs := steady(t)
	truth := ledgerOf(recs).Snapshot()
	rec := store.Covered{Totals: store.Totals{HoursCents: 100, KmCents: 200, Records: 1},
		Through: store.Position{Partition: 0, Offset: 2}, Partitions: 1}
	cps := map[string]store.Checkpoint{
		"s":       {SensorID: "s", FirstPartition: 0, FirstOffset: 1},
		"idle":    {SensorID: "idle", FirstPartition: 1, FirstOffset: 3},
		"moved":   {SensorID: "moved", FirstPartition: 2, FirstOffset: 0},
		"several": {SensorID: "several", FirstPartition: 0, FirstOffset: 0},
	}
	moved := rec
	several := rec
	several.Partitions = 2
	cut := ExpectedForCut(truth, map[string]store.Covered{"s": rec, "orphan": rec, "moved": moved, "several": several}, cps)
	want := map[string]Expectation{"s": Expected, "idle": Expected, "orphan": NoWindow, "moved": NoWindow, "several": NoWindow}
	for id, w := range want {
		if cut[id].State != w {
			t.Errorf("%s: %v, want %v", id, cut[id].State, w)
		}
	}
	if c := cut["s"]; c.Expected != rec.Totals || !c.HasFirst {
		t.Errorf("s: %+v", c)
	}
	if c := cut["idle"]; c.Expected != (store.Totals{}) || c.Records != 0 {
		t.Errorf("checkpoint without records expects nothing: %+v", c)
	}
	if cut["orphan"].HasFirst {
		t.Errorf("orphan has a first checkpoint")
	}
	// The audit read past the records and has no message of the sensor there.
	if got, state := truth.ExpectedOver("ghost", Window{Covered: rec}); state != Expected || got != (store.Totals{}) {
		t.Errorf("ghost: %v %+v", state, got)
	}
}
