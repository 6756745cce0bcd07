package audit

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// hashed is the producer's partitioner, written again: CRC-32 of the key
// modulo the partition count.
func hashed(key string, partitions int) int32 {
	return int32(crc32.ChecksumIEEE([]byte(key)) % uint32(partitions))
}

// movedTopic is ten sensors publishing in rounds, before rounds on a topic
// of 3 partitions and after rounds once it has 4: the records of a round
// after the change go where CRC-32 modulo 4 puts the key. Odometers only
// grow (idle readings and moves below a cent included).
func movedTopic(t testing.TB, seed uint64, before, after int) []record {
	rng := rand.New(rand.NewPCG(seed, 30))
	type odo struct{ hours, km float64 }
	state := map[string]*odo{}
	next := map[int32]int64{}
	var out []record
	ts := int64(1_700_000_000_000)
	for round := range before + after {
		parts := 3
		if round >= before {
			parts = 4
		}
		for i := range 10 {
			id := fmt.Sprintf("sensor-%02d", i+1)
			s := state[id]
			if s == nil {
				s = &odo{hours: 10 + rng.Float64()*100, km: 100 + rng.Float64()*5000}
				state[id] = s
			}
			switch k := rng.IntN(10); {
			case k == 0: // idle
			case k == 1:
				s.hours += rng.Float64() * 0.004
			default:
				s.hours += rng.Float64() * 0.05
				s.km += rng.Float64() * 1.5
			}
			ts += 1 + int64(rng.IntN(50))
			p := hashed(id, parts)
			value := encode(t, id, ts, s.hours, s.km)
			m, err := telemetry.Decode([]byte(id), value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, record{partition: p, offset: next[p], key: []byte(id), value: value, msg: m})
			next[p]++
		}
	}
	return out
}

// movedSensors are the sensors whose partition differs between 3 and 4
// partitions, with where they go.
func movedSensors() map[string][2]int32 {
	out := map[string][2]int32{}
	for i := range 10 {
		id := fmt.Sprintf("sensor-%02d", i+1)
		if from, to := hashed(id, 3), hashed(id, 4); from != to {
			out[id] = [2]int32{from, to}
		}
	}
	return out
}

// The ledger names every move: exactly the sensors CRC-32 modulo 4 sends
// elsewhere than modulo 3, from that partition to that one, from the
// sensor's first record in the new one; the others did not move.
func TestLedgerNamesMoves(t *testing.T) {
	recs := movedTopic(t, 1, 20, 5)
	truth := ledgerOf(recs).Snapshot()
	want := movedSensors()
	if len(want) != 7 {
		t.Fatalf("7 of 10 sensors move from 3 to 4 partitions, the partitioner says %d", len(want))
	}
	moves := truth.Moves()
	if len(moves) != len(want) {
		t.Fatalf("moves %+v, want %d", moves, len(want))
	}
	for _, m := range moves {
		w, ok := want[m.Sensor]
		if !ok || m.From != w[0] || m.To != w[1] {
			t.Errorf("%s moved %d → %d, want %v", m.Sensor, m.From, m.To, w)
		}
		first := slices.IndexFunc(recs, func(r record) bool { return r.partition == m.To && r.msg.SensorID == m.Sensor })
		if recs[first].offset != m.FirstOffset || recs[first].msg.Timestamp != m.FirstTimestamp {
			t.Errorf("%s first in %d at %d (ts %d), want %d (ts %d)", m.Sensor, m.To, m.FirstOffset, m.FirstTimestamp,
				recs[first].offset, recs[first].msg.Timestamp)
		}
	}
	for _, st := range truth.Sensors {
		if !st.Chained {
			t.Errorf("%s: series overlap: %+v", st.SensorID, st.Series)
		}
	}
}

// reader is a consumer-usage naive loop (usageSim) reading the topic
// partition by partition in an order of its own: each partition in order,
// the partitions interleaved as next picks.
type reader struct {
	sim      *usageSim
	byPart   map[int32][]record
	pos      map[int32]int
	furthest map[string]map[int32]int64
}

func newReader(recs []record) *reader {
	r := &reader{sim: newUsageSim(), byPart: map[int32][]record{}, pos: map[int32]int{}, furthest: map[string]map[int32]int64{}}
	for _, rec := range recs {
		r.byPart[rec.partition] = append(r.byPart[rec.partition], rec)
	}
	return r
}

// read takes the next record of partition p; false when it has none left.
func (r *reader) read(p int32) bool {
	if r.pos[p] >= len(r.byPart[p]) {
		return false
	}
	rec := r.byPart[p][r.pos[p]]
	r.pos[p]++
	before := r.sim.covered[rec.msg.SensorID].Records
	r.sim.handle(rec, false)
	if r.sim.covered[rec.msg.SensorID].Records > before {
		id := rec.msg.SensorID
		if r.furthest[id] == nil {
			r.furthest[id] = map[int32]int64{}
		}
		r.furthest[id][p] = max(r.furthest[id][p], rec.offset)
	}
	return true
}

// cut is the store's coverage as the reader left it, with each
// partition's furthest record.
func (r *reader) cut() map[string]store.Covered {
	out := map[string]store.Covered{}
	for id, c := range r.sim.covered {
		c.Furthest = nil
		for _, p := range []int32{0, 1, 2, 3} {
			if off, ok := r.furthest[id][p]; ok {
				c.Furthest = append(c.Furthest, store.Position{Partition: p, Offset: off})
			}
		}
		out[id] = c
	}
	return out
}

// keyOrderUsage is the usage the seed's rule yields, in the key's order
// (every record of the old partition, then the new one's), for each of
// the sensor's messages: a plain loop, independent of the ledger's sums.
func keyOrderUsage(recs []record, sensor string, from, to int32) map[store.Position]store.Totals {
	out := map[store.Position]store.Totals{}
	var prev *telemetry.Message
	for _, p := range []int32{from, to} {
		for _, r := range recs {
			if r.partition != p || r.msg.SensorID != sensor {
				continue
			}
			if prev != nil {
				if u, rec := telemetry.Delta(*prev, r.msg); rec {
					out[store.Position{Partition: p, Offset: r.offset}] = store.Totals{HoursCents: store.Cents(u.DeltaHours),
						KmCents: store.Cents(u.DeltaKm), Records: 1}
				}
			}
			m := r.msg
			prev = &m
		}
	}
	return out
}

// A consumer that reads the new partition before the old one's backlog
// records its deltas from a reading that is not the message's
// predecessor: the audit, chaining the key's two partitions in its order,
// expects what the topic yields, so the over-count shows as a drift, every
// message's cause named and adding up to it; read in the key's order, the
// same messages are exact.
func TestExpectedOverAcrossAMove(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		recs := movedTopic(t, seed, 30, 6)
		l := ledgerOf(recs)
		for _, r := range recs {
			l.SetHighWatermark(r.partition, r.offset+1)
		}
		truth := l.Snapshot()
		moved := movedSensors()
		for _, newFirst := range []bool{false, true} {
			r := newReader(recs)
			// The first 10 rounds are read as they were written, the rest
			// is backlog.
			for _, rec := range recs[:100] {
				r.read(rec.partition)
			}
			// The backlog either as it was written (every key in its
			// order), or the new partition's few records first, then each
			// old partition to its end.
			var order []int32
			for _, rec := range recs[100:] {
				order = append(order, rec.partition)
			}
			if newFirst {
				order = []int32{3, 0, 1, 2}
			}
			a := NewAttribution()
			rng := rand.New(rand.NewPCG(seed, 1))
			for _, p := range order {
				for r.read(p) {
					if rng.IntN(15) == 0 {
						checkCut(t, a, truth, recs, r, moved)
					}
					if !newFirst {
						break // one record, in the order written
					}
				}
			}
			causes := checkCut(t, a, truth, recs, r, moved)
			over := int64(0)
			for id := range moved {
				for _, c := range causes[id] {
					if c.Kind == CountedAgain {
						t.Fatalf("seed %d: %s@%d counted again: no message was read twice", seed, id, c.Offset)
					}
					dh, _ := c.Drift()
					over += dh
				}
			}
			for id := range causes {
				if _, ok := moved[id]; !ok {
					t.Fatalf("seed %d: %s did not move and has causes %+v", seed, id, causes[id])
				}
			}
			if newFirst != (over > 0) {
				t.Fatalf("seed %d, new partition first %v: moved sensors' hours drift %d cents", seed, newFirst, over)
			}
		}
	}
}

// checkCut takes a cut, checks the audit's expectation of every sensor
// against the key-order loop and its causes against the drift, and
// returns the causes.
func checkCut(t *testing.T, a *Attribution, truth Truth, recs []record, r *reader, moved map[string][2]int32) map[string][]Cause {
	t.Helper()
	cov := r.cut()
	cut := ExpectedForCut(truth, cov, r.sim.first)
	from, upTo := a.Need(truth, cut)
	causes, bad := a.Apply(truth, cut, from, simRecords(r, from, upTo))
	if len(bad) > 0 {
		t.Fatalf("causes do not add up for %v", bad)
	}
	for id, c := range cut {
		if c.Records == 0 {
			continue
		}
		if c.State != Expected {
			t.Fatalf("%s: %v over %+v", id, c.State, c.Covered)
		}
		w, ok := moved[id]
		if !ok {
			p := hashed(id, 3)
			w = [2]int32{p, p}
		}
		deltas := keyOrderUsage(recs, id, w[0], w[1])
		var want store.Totals
		first := r.sim.first[id]
		for _, f := range c.Furthest {
			for at, u := range deltas {
				inWindow := at.Partition == f.Partition && at.Offset <= f.Offset &&
					(at.Partition != first.FirstPartition || at.Offset > first.FirstOffset)
				if inWindow {
					want = want.Plus(u)
				}
			}
		}
		if c.Expected != want {
			t.Fatalf("%s: expected %+v over %+v, the key-order loop %+v", id, c.Expected, c.Furthest, want)
		}
		var h, k int64
		for _, cause := range causes[id] {
			dh, dk := cause.Drift()
			h, k = h+dh, k+dk
			if at := (store.Position{Partition: cause.Partition, Offset: cause.Offset}); cause.Expected != deltas[at] &&
				!(at.Partition == first.FirstPartition && at.Offset <= first.FirstOffset) {
				t.Fatalf("%s@%d:%d expected %+v, the key-order loop %+v", id, at.Partition, at.Offset, cause.Expected, deltas[at])
			}
		}
		if h != c.HoursCents-c.Expected.HoursCents || k != c.KmCents-c.Expected.KmCents {
			t.Fatalf("%s: causes sum to %d/%d cents, drift is %d/%d", id, h, k,
				c.HoursCents-c.Expected.HoursCents, c.KmCents-c.Expected.KmCents)
		}
	}
	return causes
}

// simRecords is the store's usage records of the reader, as the lab reads
// them for Apply.
func simRecords(r *reader, from, upTo map[string]int64) map[string][]store.SensorRecord {
	out := map[string][]store.SensorRecord{}
	for id, n := range upTo {
		out[id] = append([]store.SensorRecord(nil), r.sim.recs[id][from[id]:n]...)
	}
	return out
}
