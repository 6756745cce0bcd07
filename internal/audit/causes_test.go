package audit

import (
	"math/rand/v2"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// recordStore is the usage collection of one test: every record per
// sensor in seq order, and the cut's totals folded from them.
type recordStore struct {
	recs map[string][]store.SensorRecord
}

func (s *recordStore) add(sensor string, offset, hoursCents, kmCents int64, writer string) {
	rs := s.recs[sensor]
	s.recs[sensor] = append(rs, store.SensorRecord{Seq: int64(len(rs)) + 1, Offset: offset,
		HoursCents: hoursCents, KmCents: kmCents, Writer: writer})
}

func (s *recordStore) covered() map[string]store.Covered {
	out := map[string]store.Covered{}
	for id, rs := range s.recs {
		var c store.Covered
		for _, r := range rs {
			c.HoursCents += r.HoursCents
			c.KmCents += r.KmCents
			c.Records++
			if c.Records == 1 || r.Offset > c.Through.Offset {
				c.Through = store.Position{Partition: r.Partition, Offset: r.Offset}
			}
			c.Partitions = 1
		}
		out[id] = c
	}
	return out
}

// read is the lab's part: the records Need asks for, read from the store.
func (s *recordStore) read(from, upTo map[string]int64) map[string][]store.SensorRecord {
	out := map[string][]store.SensorRecord{}
	for id, n := range upTo {
		out[id] = append([]store.SensorRecord(nil), s.recs[id][from[id]:n]...)
	}
	return out
}

// attribute runs one poll: cut, Need, read, Apply (and the rebuild of any
// sensor that did not add up), and checks every sensor's causes against
// its drift.
func attribute(t *testing.T, a *Attribution, truth Truth, st *recordStore, first map[string]store.Checkpoint) map[string][]Cause {
	t.Helper()
	cut := ExpectedForCut(truth, st.covered(), first)
	from, upTo := a.Need(truth, cut)
	causes, bad := a.Apply(truth, cut, from, st.read(from, upTo))
	if len(bad) > 0 {
		t.Fatalf("causes do not add up for %v", bad)
	}
	for id, c := range cut {
		if c.State != Expected {
			continue
		}
		var h, k int64
		for _, cause := range causes[id] {
			dh, dk := cause.Drift()
			h, k = h+dh, k+dk
			if want := truth.deltaAt(id, cause.Partition, cause.Offset); cause.Offset > c.First.Offset && want != cause.Expected {
				t.Fatalf("%s@%d expected %+v, the topic yields %+v", id, cause.Offset, cause.Expected, want)
			}
		}
		if h != c.HoursCents-c.Expected.HoursCents || k != c.KmCents-c.Expected.KmCents {
			t.Fatalf("%s: causes sum to %d/%d cents, drift is %d/%d", id, h, k,
				c.HoursCents-c.Expected.HoursCents, c.KmCents-c.Expected.KmCents)
		}
	}
	return causes
}

func TestAttributionNamesEachMessage(t *testing.T) {
	truth := ledgerOf(steady(t)).Snapshot()
	first := map[string]store.Checkpoint{"s": {SensorID: "s", FirstPartition: 0, FirstOffset: 1}}
	st := &recordStore{recs: map[string][]store.SensorRecord{}}
	a := NewAttribution()
	// Exact through offset 3: nothing to read, no cause.
	st.add("s", 2, 100, 200, "w1")
	st.add("s", 3, 100, 200, "w1")
	if c := attribute(t, a, truth, st, first); len(c) != 0 {
		t.Fatalf("exact: causes %+v", c)
	}
	cut := ExpectedForCut(truth, st.covered(), first)
	if from, _ := a.Need(truth, cut); len(from) != 0 {
		t.Fatalf("an exact sensor asks for records: %v", from)
	}
	// A crash replays offset 3: counted again.
	st.add("s", 3, 100, 200, "w2")
	c := attribute(t, a, truth, st, first)["s"]
	if len(c) != 1 || c[0].Kind != CountedAgain || c[0].Offset != 3 || c[0].Records != 2 || c[0].Writer != "w2" ||
		c[0].Recorded.HoursCents != 200 || c[0].Expected.HoursCents != 100 {
		t.Fatalf("counted again: %+v", c)
	}
	// Offset 5 is never recorded and 6 takes its delta from 4's reading:
	// the two cancel in hours and km, and both are named.
	st.add("s", 6, 200, 400, "w2")
	c = attribute(t, a, truth, st, first)["s"]
	if len(c) != 3 || c[1].Kind != NeverRecorded || c[1].Offset != 5 || c[2].Kind != StaleReading || c[2].Offset != 6 {
		t.Fatalf("lost and stale: %+v", c)
	}
	// A record of the first checkpoint's message (a replay from earliest):
	// nothing is expected of it.
	st.add("s", 1, 100, 200, "w3")
	c = attribute(t, a, truth, st, first)["s"]
	if c[0].Offset != 1 || c[0].Kind != StaleReading || c[0].Expected != (store.Totals{}) {
		t.Fatalf("reference replayed: %+v", c)
	}
	// A reset of the store: every record gone, nothing left to name.
	st.recs = map[string][]store.SensorRecord{}
	if c := attribute(t, a, truth, st, first); len(c) != 0 {
		t.Fatalf("after a reset: %+v", c)
	}
}

// Random replays, losses and stale deltas, attributed poll by poll, sum to
// the drift at every poll and agree with an attribution from scratch.
func TestAttributionIncrementalMatchesFromScratch(t *testing.T) {
	for seed := range uint64(4) {
		recs := keyedTopic(t, seed, 1200)
		truth := ledgerOf(recs).Snapshot()
		rng := rand.New(rand.NewPCG(seed, 11))
		sim := newUsageSim()
		st := &recordStore{recs: map[string][]store.SensorRecord{}}
		a := NewAttribution()
		var named int
		for i, r := range recs {
			sim.handle(r, false)
			if r.err != nil {
				continue
			}
			id := r.msg.SensorID
			u, _ := truth.ExpectedUsageBetween(id, r.partition, r.offset-1, r.offset)
			if _, ok := sim.first[id]; !ok || u.Records == 0 || int64(sim.first[id].FirstOffset) >= r.offset {
				continue
			}
			switch x := rng.IntN(20); {
			case x == 0: // lost
			case x == 1: // counted again
				st.add(id, r.offset, u.HoursCents, u.KmCents, "w")
				st.add(id, r.offset, u.HoursCents, u.KmCents, "w")
			case x == 2: // stale reading
				st.add(id, r.offset, u.HoursCents+37, u.KmCents+5, "w")
			default:
				st.add(id, r.offset, u.HoursCents, u.KmCents, "w")
			}
			if i%7 == 0 {
				attribute(t, a, truth, st, sim.first)
			}
		}
		got := attribute(t, a, truth, st, sim.first)
		want := attribute(t, NewAttribution(), truth, st, sim.first)
		for id := range want {
			if len(got[id]) != len(want[id]) {
				t.Fatalf("seed %d %s: %d causes incrementally, %d from scratch", seed, id, len(got[id]), len(want[id]))
			}
			for j := range want[id] {
				if got[id][j] != want[id][j] {
					t.Fatalf("seed %d %s: %+v, from scratch %+v", seed, id, got[id][j], want[id][j])
				}
			}
			named += len(want[id])
		}
		if named == 0 {
			t.Fatalf("seed %d: no cause named", seed)
		}
	}
}

// deltaAt is the usage the seed's rule yields for the sensor's message at
// partition/offset, in the key's order (zero when it is no valid message
// of the sensor).
func (t Truth) deltaAt(sensor string, partition int32, offset int64) store.Totals {
	ch, _ := t.chain(sensor)
	if i := index(ch, partition); i >= 0 {
		return ch[i].deltaAt(offset)
	}
	return store.Totals{}
}
