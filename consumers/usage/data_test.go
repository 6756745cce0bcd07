package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

const testTopic = "sensor-data"

// baseTS is a fixed epoch-ms so generated data is reproducible.
const baseTS = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z

// readingEvery is the time between readings i and i+1 of a sensor, in ms.
const readingEvery = 5 * 3_600_000

// reading builds one valid message value; odometers are given in cents so
// that expected sums are exact integers. Reading i is stamped i×5 h after
// baseTS: time enough for the steps the tests make (telemetry's jump rule).
func reading(t testing.TB, sensor string, i int, hoursCents, kmCents int64) []byte {
	t.Helper()
	v, err := telemetry.Encode(telemetry.Message{
		SensorID:  sensor,
		Timestamp: baseTS + int64(i)*readingEvery,
		Odometry:  telemetry.Odometry{HoursTot: float64(hoursCents) / 100, KmTot: float64(kmCents) / 100},
		Position:  telemetry.Position{Lat: 45.07, Lon: 7.68},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func rec(sensor string, partition int32, offset int64, value []byte) Record {
	return Record{Partition: partition, Offset: offset, Key: []byte(sensor), Value: value}
}

// newTestProcessor returns a processor on st whose crash points return
// ErrCrashed instead of killing the test, and the sink of its events.
func newTestProcessor(t testing.TB, st Store, mode lesson.Mode, arm *CrashArm) (*Processor, *eventSink) {
	t.Helper()
	sink := &eventSink{}
	p := NewProcessor(ProcessorConfig{
		Store: st, Topic: testTopic, Mode: mode, Crash: arm,
		OnCrash:    func(ev status.Event) { sink.Write(mustJSON(ev)) },
		Emitter:    status.NewTo(Role, sink),
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Load(ctx); err != nil {
		t.Fatal(err)
	}
	return p, sink
}

func mustJSON(ev status.Event) []byte {
	ev.Role = Role
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}

// feed handles records in order and fails the test on any error.
func feed(t testing.TB, p *Processor, recs ...Record) []Result {
	t.Helper()
	out := make([]Result, 0, len(recs))
	for _, r := range recs {
		res, err := p.Handle(context.Background(), r)
		if err != nil {
			t.Fatalf("handle p%d@%d: %v", r.Partition, r.Offset, err)
		}
		out = append(out, res)
	}
	return out
}

// totalsOf is the records' totals, which the summaries (what consumer-query
// answers) must equal: call it where no writer died between its two writes
// since the last resume.
func totalsOf(t testing.TB, st *store.Store) map[string]store.Totals {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tot := recordedTotals(t, st)
	// What consumer-query answers (the summaries) is what the records say.
	cov, err := st.UsageCoverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	summarized := map[string]store.Totals{}
	for id, c := range cov {
		summarized[id] = c.Totals
	}
	sameTotals(t, "summaries vs records", summarized, tot)
	return tot
}

// recordedTotals is the records' totals only.
func recordedTotals(t testing.TB, st *store.Store) map[string]store.Totals {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tot, err := st.UsageTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tot
}

func checkpointsOf(t testing.TB, st *store.Store) map[string]store.Checkpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cps, err := st.LoadCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return cps
}

// sameTotals compares totals of every sensor in either map.
func sameTotals(t testing.TB, what string, got, want map[string]store.Totals) {
	t.Helper()
	for s, w := range want {
		if got[s] != w {
			t.Errorf("%s: sensor %s totals %+v, want %+v", what, s, got[s], w)
		}
	}
	for s, g := range got {
		if _, ok := want[s]; !ok {
			t.Errorf("%s: unexpected totals for sensor %s: %+v", what, s, g)
		}
	}
}

// genLog is a generated topic: per partition, records in offset order.
type genLog struct {
	parts [][]Record
	// jumps are the records made to jump ahead (partition, offset): valid
	// on their own, invalid against the reading before them.
	jumps map[[2]int64]bool
	// lastValid is each sensor's last valid record: where its checkpoint must end.
	lastValid map[string]Record
}

// generate builds a random multi-partition log with idle readings and bad
// input (garbage, missing fields, key mismatches, odometers going back or
// jumping ahead).
// Sensor i lives on partition i % partitions, as a keyed producer does.
func generate(t testing.TB, rng *rand.Rand, sensors, partitions, perSensor int) genLog {
	t.Helper()
	g := genLog{parts: make([][]Record, partitions), lastValid: map[string]Record{}, jumps: map[[2]int64]bool{}}
	type sensorState struct {
		hours, km int64
		i         int
	}
	states := make([]sensorState, sensors)
	for s := range states {
		states[s] = sensorState{hours: 1000 + rng.Int64N(100000), km: 50000 + rng.Int64N(1000000)}
	}
	remaining := make([]int, sensors)
	for s := range remaining {
		remaining[s] = perSensor
	}
	left := sensors * perSensor
	for left > 0 {
		s := rng.IntN(sensors)
		if remaining[s] == 0 {
			continue
		}
		id := fmt.Sprintf("sensor-%02d", s)
		p := int32(s % partitions)
		off := int64(len(g.parts[p]))
		st := &states[s]
		var value []byte
		valid := false
		switch x := rng.IntN(20); {
		case x == 0:
			value = []byte(`{"sensor_id": "` + id + `", "odometry": "garbage"}`)
		case x == 1:
			value = []byte("not json at all")
		case x == 2 && st.i > 0:
			// odometer going back: bad input, must be skipped
			value = reading(t, id, st.i, st.hours-1-rng.Int64N(50), st.km-rng.Int64N(50))
		case x == 4 && st.i > 0:
			// 10,000 h ahead in 5 h: a jump, never the reference
			value = reading(t, id, st.i, st.hours+1_000_000+rng.Int64N(1000), st.km)
			g.jumps[[2]int64{int64(p), off}] = true
		case x == 3:
			// key mismatch: produced under another sensor's key
			value = reading(t, id+"-other", st.i, st.hours, st.km)
		default:
			if rng.IntN(5) > 0 { // else idle: same odometers, no usage record
				st.hours += rng.Int64N(300)
				st.km += rng.Int64N(2000)
			}
			value = reading(t, id, st.i, st.hours, st.km)
			valid = true
			st.i++
			remaining[s]--
			left--
		}
		r := rec(id, p, off, value)
		g.parts[p] = append(g.parts[p], r)
		if valid {
			g.lastValid[id] = r
		}
	}
	return g
}

// expectedTotals is the truth for a log read once, in order, from its first
// offset: the seed's delta rule between consecutive valid readings of each
// sensor, computed independently of the Processor (integer cents).
func expectedTotals(t testing.TB, g genLog) map[string]store.Totals {
	t.Helper()
	want := map[string]store.Totals{}
	for _, part := range g.parts {
		prev := map[string]telemetry.Message{}
		for _, r := range part {
			m, err := telemetry.Decode(r.Key, r.Value)
			if err != nil || g.jumps[[2]int64{int64(r.Partition), r.Offset}] {
				continue
			}
			p, ok := prev[m.SensorID]
			if ok && (m.Odometry.HoursTot < p.Odometry.HoursTot || m.Odometry.KmTot < p.Odometry.KmTot) {
				continue
			}
			prev[m.SensorID] = m
			if !ok {
				continue
			}
			dh := store.Cents(m.Odometry.HoursTot) - store.Cents(p.Odometry.HoursTot)
			dk := store.Cents(m.Odometry.KmTot) - store.Cents(p.Odometry.KmTot)
			if dh > 0 || dk > 0 {
				tot := want[m.SensorID]
				tot.HoursCents += dh
				tot.KmCents += dk
				tot.Records++
				want[m.SensorID] = tot
			}
		}
	}
	return want
}
