package audit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// record is one topic record as the tests feed it.
type record struct {
	partition  int32
	offset     int64
	key, value []byte
	// decoded once, so the naive loop stays cheap enough to run thousands of times
	msg telemetry.Message
	err error
}

func encode(t testing.TB, id string, ts int64, hours, km float64) []byte {
	t.Helper()
	b, err := telemetry.Encode(telemetry.Message{SensorID: id, Timestamp: ts,
		Odometry: telemetry.Odometry{HoursTot: hours, KmTot: km}, Position: telemetry.Position{Lat: 45, Lon: 9}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// naiveUsage recomputes a window with a plain loop over the records, as a
// reading of the rule independent of the prefix sums.
func naiveUsage(records []record, sensor string, partition int32, after, through int64) (store.Totals, int64, int64) {
	var sum store.Totals
	var prev *telemetry.Message
	var prevOffset int64
	var valid, invalid int64
	for _, r := range records {
		if r.partition != partition {
			continue
		}
		m, err := r.msg, r.err
		if err != nil {
			if string(r.key) == sensor {
				invalid++
			}
			continue
		}
		if m.SensorID != sensor {
			continue
		}
		if prev != nil && telemetry.CheckSuccessorAfter(*prev, m, r.offset-prevOffset) != nil {
			invalid++
			continue
		}
		valid++
		if prev != nil && r.offset > after && (through < 0 || r.offset <= through) {
			if u, rec := telemetry.Delta(*prev, m); rec {
				sum.HoursCents += store.Cents(u.DeltaHours)
				sum.KmCents += store.Cents(u.DeltaKm)
				sum.Records++
			}
		}
		prev, prevOffset = &m, r.offset
	}
	return sum, valid, invalid
}

// randomTopic builds records of sensors spread over partitions, with idle
// readings, sub-cent moves, odometers going back, malformed values, values
// whose key disagrees and keyless garbage.
func randomTopic(t testing.TB, rng *rand.Rand, n int) []record {
	const sensors, partitions = 7, 3
	type odo struct{ hours, km float64 }
	state := map[string]*odo{}
	next := map[int32]int64{}
	var out []record
	ts := int64(1_700_000_000_000)
	for range n {
		id := fmt.Sprintf("sensor-%02d", rng.IntN(sensors))
		p := int32(len(id)+int(id[len(id)-1])) % partitions // a key decides the partition
		if rng.IntN(40) == 0 {
			p = int32(rng.IntN(partitions)) // a stray: same sensor in another partition
		}
		s := state[id]
		if s == nil {
			s = &odo{hours: 10 + rng.Float64()*1000, km: 100 + rng.Float64()*50000}
			state[id] = s
		}
		ts += int64(rng.IntN(2000))
		var key, value []byte = []byte(id), nil
		switch k := rng.IntN(100); {
		case k < 3:
			value = []byte(`{"sensor_id":` + id) // truncated JSON
		case k < 5:
			value = encode(t, id, ts, s.hours-rng.Float64()*5, s.km) // hours go back
		case k < 6:
			value = encode(t, id, ts, s.hours, s.km-0.01) // km goes back by a cent
		case k < 7:
			key, value = nil, []byte("garbage")
		case k < 8:
			key, value = []byte("other"), encode(t, id, ts, s.hours+1, s.km+1) // key mismatch
		case k < 20:
			value = encode(t, id, ts, s.hours, s.km) // idle
		case k < 25:
			s.hours += rng.Float64() * 0.004 // below a cent
			value = encode(t, id, ts, s.hours, s.km)
		default:
			s.hours += rng.Float64() * 0.05
			s.km += rng.Float64() * 1.5
			value = encode(t, id, ts, s.hours, s.km)
		}
		next[p] += 1 + int64(rng.IntN(3)) // gaps, as in a shared log
		m, err := telemetry.Decode(key, value)
		out = append(out, record{partition: p, offset: next[p], key: key, value: value, msg: m, err: err})
	}
	return out
}

func TestLedgerMatchesNaiveLoop(t *testing.T) {
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 42))
		recs := randomTopic(t, rng, 3000)
		l := NewLedger()
		for _, r := range recs {
			l.Add(r.partition, r.offset, r.key, r.value)
		}
		truth := l.Snapshot()

		var sumValid, sumInvalid int64
		for _, st := range truth.Sensors {
			sumValid += st.Valid
			sumInvalid += st.Invalid
		}
		if sumValid != truth.Valid || sumInvalid+truth.Unattributed != truth.Invalid || truth.Read() != int64(len(recs)) {
			t.Fatalf("seed %d: totals valid %d invalid %d unattributed %d read %d, records %d",
				seed, truth.Valid, truth.Invalid, truth.Unattributed, truth.Read(), len(recs))
		}

		for i := range 7 {
			id := fmt.Sprintf("sensor-%02d", i)
			st, ok := truth.Sensor(id)
			if !ok {
				t.Fatalf("seed %d: %s missing", seed, id)
			}
			var valid, invalid int64
			for p := range int32(3) {
				_, v, inv := naiveUsage(recs, id, p, -1, -1)
				valid += v
				invalid += inv
				// Random windows, including empty and reversed ones and
				// bounds that fall between the sensor's offsets.
				for range 40 {
					after := rng.Int64N(2200) - 100
					through := after + rng.Int64N(2200) - 100
					if rng.IntN(5) == 0 {
						through = -1
					}
					want, v, _ := naiveUsage(recs, id, p, after, through)
					got, ok := truth.ExpectedUsageBetween(id, p, after, through)
					if ok != (v > 0) || got != want {
						t.Fatalf("seed %d %s p%d (%d,%d]: got %+v ok=%v, want %+v (valid %d)",
							seed, id, p, after, through, got, ok, want, v)
					}
				}
			}
			if st.Valid != valid || st.Invalid != invalid {
				t.Fatalf("seed %d %s: valid/invalid %d/%d, want %d/%d", seed, id, st.Valid, st.Invalid, valid, invalid)
			}
		}
		if other, ok := truth.Sensor("other"); !ok || other.Valid != 0 || other.Invalid == 0 || other.HasLast {
			t.Fatalf("seed %d: key-mismatch records not counted under their key: %+v", seed, other)
		}
	}
}

func TestLedgerBackwardsIsNotAReference(t *testing.T) {
	l := NewLedger()
	add := func(off int64, hours, km float64) {
		l.Add(0, off, []byte("s1"), encode(t, "s1", 1_700_000_000_000+off, hours, km))
	}
	add(0, 100, 1000)
	add(1, 101, 1010) // +1.00 h, +10.00 km
	add(2, 50, 500)   // back: invalid, not the reference
	add(3, 101.5, 1010)
	l.Add(0, 4, []byte("s1"), []byte("{not json"))
	add(5, 101.5, 1010) // idle: valid, no record
	add(6, 102.004, 1010.999)

	truth := l.Snapshot()
	st, _ := truth.Sensor("s1")
	if st.Valid != 5 || st.Invalid != 2 || st.Backwards != 1 || !st.HasLast || st.Last.Offset != 6 || st.Last.Partition != 0 {
		t.Fatalf("sensor %+v", st)
	}
	if st.LastErrorAt != 4 || st.LastError == "" {
		t.Fatalf("last error %q at %d", st.LastError, st.LastErrorAt)
	}
	// Deltas recorded: off1 (+100h, +1000km cents), off3 (+50h, 0), off6 (+50h, +100km).
	cases := []struct {
		after, through int64
		want           store.Totals
	}{
		{-1, -1, store.Totals{HoursCents: 200, KmCents: 1100, Records: 3}},
		{0, -1, store.Totals{HoursCents: 200, KmCents: 1100, Records: 3}}, // the first message only checkpoints
		{1, -1, store.Totals{HoursCents: 100, KmCents: 100, Records: 2}},  // from a checkpoint at 1
		{2, -1, store.Totals{HoursCents: 100, KmCents: 100, Records: 2}},  // 2 was invalid; reference is 1
		{3, 5, store.Totals{}}, // idle only
		{1, 3, store.Totals{HoursCents: 50, Records: 1}},
		{6, -1, store.Totals{}},
		{5, 2, store.Totals{}}, // reversed window
	}
	for _, c := range cases {
		got, ok := truth.ExpectedUsageBetween("s1", 0, c.after, c.through)
		if !ok || got != c.want {
			t.Errorf("(%d,%d]: got %+v ok=%v, want %+v", c.after, c.through, got, ok, c.want)
		}
	}
	if _, ok := truth.ExpectedUsage("s1", 1, -1); ok {
		t.Error("ok for a partition without the sensor")
	}
	if _, ok := truth.ExpectedUsage("nobody", 0, -1); ok {
		t.Error("ok for an unknown sensor")
	}
}

func TestSnapshotIsStableWhileLedgerGrows(t *testing.T) {
	l := NewLedger()
	for i := range int64(100) {
		l.Add(0, i, []byte("s"), encode(t, "s", 1_700_000_000_000+i, float64(i), float64(2*i)))
	}
	before := l.Snapshot()
	want, _ := before.ExpectedUsage("s", 0, -1)
	for i := int64(100); i < 5000; i++ { // forces the entries slice to grow
		l.Add(0, i, []byte("s"), encode(t, "s", 1_700_000_000_000+i, float64(i), float64(2*i)))
	}
	got, _ := before.ExpectedUsage("s", 0, -1)
	st, _ := before.Sensor("s")
	if got != want || st.Valid != 100 || st.Last.Offset != 99 {
		t.Fatalf("old snapshot changed: %+v %+v", got, st)
	}
	after, _ := l.Snapshot().ExpectedUsage("s", 0, -1)
	if after.Records != 4999 || after.HoursCents != 499900 || after.KmCents != 999800 {
		t.Fatalf("new snapshot %+v", after)
	}
}

func TestPartitionLogRestartDropsItsHistory(t *testing.T) {
	l := NewLedger()
	for i := range int64(10) {
		l.Add(0, i, []byte("a"), encode(t, "a", 1_700_000_000_000+i, float64(i), 0))
		l.Add(1, i, []byte("b"), encode(t, "b", 1_700_000_000_000+i, float64(i), 0))
	}
	l.Add(0, 0, []byte("a"), encode(t, "a", 1_800_000_000_000, 5, 0)) // the log of partition 0 began again
	truth := l.Snapshot()
	a, _ := truth.Sensor("a")
	b, _ := truth.Sensor("b")
	if truth.Resets != 1 || a.Valid != 1 || a.Last.Message.Odometry.HoursTot != 5 || b.Valid != 10 {
		t.Fatalf("resets %d, a %+v, b %+v", truth.Resets, a, b)
	}
	if p := truth.Partitions[0]; p.Partition != 0 || p.Next != 1 {
		t.Fatalf("partition 0 progress %+v", p)
	}
}

func TestCaughtUp(t *testing.T) {
	l := NewLedger()
	if l.Snapshot().CaughtUp() {
		t.Fatal("caught up with no partitions")
	}
	l.Track(0)
	l.Track(1)
	if l.Snapshot().CaughtUp() {
		t.Fatal("caught up before any watermark")
	}
	l.SetHighWatermark(0, 0) // empty partition
	l.SetHighWatermark(1, 2)
	l.Add(1, 0, []byte("s"), encode(t, "s", 1_700_000_000_000, 1, 1))
	if l.Snapshot().CaughtUp() {
		t.Fatal("caught up at 1 of 2")
	}
	l.Add(1, 1, nil, []byte("x")) // an invalid record still advances the position
	if truth := l.Snapshot(); !truth.CaughtUp() || truth.Unattributed != 1 || truth.Invalid != 1 {
		t.Fatalf("not caught up at the end: %+v", truth.Partitions)
	}
}

// TestLedgerHundredThousand checks the in-memory cost the dashboard pays for
// a long run: 100k records in well under a second, and a window query that
// does not scan.
func TestLedgerHundredThousand(t *testing.T) {
	const n = 100_000
	values := make([][]byte, 10)
	l := NewLedger()
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("sensor-%02d", i%10)
		m := telemetry.Message{SensorID: id, Timestamp: 1_700_000_000_000 + int64(i),
			Odometry: telemetry.Odometry{HoursTot: float64(i/10) * 0.01, KmTot: float64(i/10) * 0.25},
			Position: telemetry.Position{Lat: 1, Lon: 1}}
		values[i%10], _ = json.Marshal(m)
		l.Add(int32(i%10%3), int64(i), []byte(id), values[i%10])
	}
	took := time.Since(start)
	truth := l.Snapshot()
	qstart := time.Now()
	got, ok := truth.ExpectedUsage("sensor-03", 0, -1)
	qtook := time.Since(qstart)
	if !ok || got.Records != n/10-1 || got.HoursCents != n/10-1 || got.KmCents != 25*(n/10-1) {
		t.Fatalf("sensor-03: %+v", got)
	}
	t.Logf("100k records ingested in %v, window query %v", took.Round(time.Millisecond), qtook)
	// Generous for -race on 2 cores (~5 s); anything quadratic takes minutes.
	if took > 30*time.Second {
		t.Fatalf("ingesting 100k records took %v", took)
	}
}

// TestLedgerKeyOrder: a key's records in order count no disorder; a
// duplicate (the same reading at the same timestamp again) and a record
// older than the previous one each count one (the older one is also
// invalid, backwards), and a key read from two partitions says so.
func TestLedgerKeyOrder(t *testing.T) {
	const hour = 3_600_000
	l := NewLedger()
	l.Add(0, 0, []byte("s1"), encode(t, "s1", 1*hour, 1, 1))
	l.Add(0, 1, []byte("s1"), encode(t, "s1", 2*hour, 2, 2))
	l.Add(1, 0, []byte("s2"), encode(t, "s2", 1*hour, 1, 1))
	l.Add(1, 1, []byte("s2"), encode(t, "s2", 1*hour, 1, 1)) // a duplicate
	l.Add(1, 2, []byte("s2"), encode(t, "s2", 3*hour, 3, 3))
	l.Add(1, 3, []byte("s2"), encode(t, "s2", 2*hour, 3, 3)) // older than the previous
	l.Add(2, 0, []byte("s1"), encode(t, "s1", 3*hour, 3, 3)) // s1 on a second partition
	tr := l.Snapshot()
	s1, _ := tr.Sensor("s1")
	s2, _ := tr.Sensor("s2")
	if s1.Disordered != 0 || s2.Disordered != 2 {
		t.Errorf("disordered s1 %d, s2 %d; want 0 and 2", s1.Disordered, s2.Disordered)
	}
	if s1.Invalid != 0 || s2.Invalid != 1 || s2.Backwards != 1 || !strings.HasPrefix(s2.LastError, "backwards: timestamp went backwards") {
		t.Errorf("invalid s1 %d, s2 %d (backwards %d, %q); want 0 and 1 backwards", s1.Invalid, s2.Invalid, s2.Backwards, s2.LastError)
	}
	if fmt.Sprint(s1.PartitionIDs) != "[0 2]" || fmt.Sprint(s2.PartitionIDs) != "[1]" {
		t.Errorf("partitions s1 %v, s2 %v; want [0 2] and [1]", s1.PartitionIDs, s2.PartitionIDs)
	}
}

// TestLedgerJump: a reading far ahead of the clock is skipped as a jump and
// is never the reference: the readings after it are valid, and the usage
// the audit expects is theirs.
func TestLedgerJump(t *testing.T) {
	const minute = 60_000
	l := NewLedger()
	l.Add(0, 0, []byte("sensor-02"), encode(t, "sensor-02", 1*minute, 2619.55, 5000))
	l.Add(0, 1, []byte("sensor-02"), encode(t, "sensor-02", 2*minute, 999999, 999999))
	l.Add(0, 2, []byte("sensor-02"), encode(t, "sensor-02", 3*minute, 2619.75, 5000.5))
	l.Add(0, 3, []byte("sensor-02"), encode(t, "sensor-02", 4*minute, 2619.95, 5001))
	tr := l.Snapshot()
	s, _ := tr.Sensor("sensor-02")
	if s.Valid != 3 || s.Invalid != 1 || !strings.HasPrefix(s.LastError, "jump: hours 2619.55 -> 999999.00") {
		t.Fatalf("valid %d, invalid %d (%q); want 3 and the jump", s.Valid, s.Invalid, s.LastError)
	}
	got, ok := tr.ExpectedUsage("sensor-02", 0, -1)
	if !ok || got != (store.Totals{HoursCents: 40, KmCents: 100, Records: 2}) {
		t.Fatalf("expected usage %+v, want 0.40 h, 1.00 km in 2 records", got)
	}
}
