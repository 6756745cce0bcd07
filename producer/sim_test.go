package producer

import (
	"math"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// run generates steps messages per sensor, one step per simulated second.
func run(f *Fleet, steps int) [][]telemetry.Message {
	out := make([][]telemetry.Message, f.Size())
	t0 := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	for s := range steps {
		for i := range f.Size() {
			out[i] = append(out[i], f.Next(i, t0.Add(time.Duration(s)*time.Second)))
		}
	}
	return out
}

func TestSensorIDs(t *testing.T) {
	if got := SensorID(0, 10); got != "sensor-01" {
		t.Fatalf("SensorID(0,10) = %q", got)
	}
	if got := SensorID(9, 10); got != "sensor-10" {
		t.Fatalf("SensorID(9,10) = %q", got)
	}
	if got := SensorID(4, 120); got != "sensor-005" {
		t.Fatalf("SensorID(4,120) = %q", got)
	}
}

func TestSameSeedSameValues(t *testing.T) {
	a := run(NewFleet(42, 10, nil), 200)
	b := run(NewFleet(42, 10, nil), 200)
	for i := range a {
		for s := range a[i] {
			if a[i][s] != b[i][s] {
				t.Fatalf("sensor %d step %d: %+v vs %+v", i, s, a[i][s], b[i][s])
			}
		}
	}
	c := run(NewFleet(43, 10, nil), 200)
	if a[0][199].Odometry == c[0][199].Odometry {
		t.Fatalf("seeds 42 and 43 gave the same odometry %+v", a[0][199].Odometry)
	}
}

// A sensor's values must not depend on how calls for other sensors interleave.
func TestSensorSequenceIndependentOfOthers(t *testing.T) {
	all := run(NewFleet(7, 3, nil), 50)
	f := NewFleet(7, 3, nil)
	t0 := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	for s := range 50 {
		got := f.Next(1, t0.Add(time.Duration(s)*time.Second))
		if got != all[1][s] {
			t.Fatalf("step %d: %+v vs %+v", s, got, all[1][s])
		}
	}
}

func TestValuesArePlausible(t *testing.T) {
	out := run(NewFleet(1, 10, nil), 500)
	for i, msgs := range out {
		idleSteps, workSteps := 0, 0
		var workHours, workKm float64
		for s, m := range msgs {
			if err := m.Validate(); err != nil {
				t.Fatalf("sensor %d step %d: %v", i, s, err)
			}
			if m.SensorID != SensorID(i, 10) {
				t.Fatalf("sensor %d: id %q", i, m.SensorID)
			}
			if s == 0 {
				continue
			}
			prev := msgs[s-1]
			if err := telemetry.CheckSuccessor(prev, m); err != nil {
				t.Fatalf("sensor %d step %d: %v", i, s, err)
			}
			if m.Timestamp <= prev.Timestamp {
				t.Fatalf("sensor %d step %d: timestamp %d after %d", i, s, m.Timestamp, prev.Timestamp)
			}
			dh := m.Odometry.HoursTot - prev.Odometry.HoursTot
			dkm := m.Odometry.KmTot - prev.Odometry.KmTot
			moved := distanceKm(prev.Position, m.Position)
			if dh == 0 && dkm == 0 {
				idleSteps++
				if moved != 0 {
					t.Fatalf("sensor %d step %d: idle machine moved %.3f km", i, s, moved)
				}
				continue
			}
			workSteps++
			workHours += dh
			workKm += dkm
			if dh < 0.01 || dh > maxHoursStep+0.01 {
				t.Fatalf("sensor %d step %d: hours step %.4f", i, s, dh)
			}
			// The delta rule must see something for a working machine.
			if u, record := telemetry.Delta(prev, m); !record {
				t.Fatalf("sensor %d step %d: working step records nothing: %+v", i, s, u)
			}
			if moved > dkm+0.01 {
				t.Fatalf("sensor %d step %d: moved %.3f km but odometer says %.3f", i, s, moved, dkm)
			}
			if d := distanceKm(msgs[0].Position, m.Position); d > 2*siteRadiusKm+2 {
				t.Fatalf("sensor %d step %d: %.1f km from where it started", i, s, d)
			}
		}
		if idleSteps == 0 || workSteps == 0 {
			t.Fatalf("sensor %d: %d idle and %d working steps; want both", i, idleSteps, workSteps)
		}
		if ratio := workKm / workHours; ratio < minKmPerHour*0.5 || ratio > maxKmPerHour*1.5 {
			t.Fatalf("sensor %d: %.2f km per engine hour", i, ratio)
		}
		first := msgs[0].Odometry
		if first.KmTot/first.HoursTot > maxKmPerHour*1.2 {
			t.Fatalf("sensor %d: starts with %.2f km for %.2f h", i, first.KmTot, first.HoursTot)
		}
	}
}

func TestContinuesFromLastMessage(t *testing.T) {
	first := run(NewFleet(5, 4, nil), 30)
	last := map[string]telemetry.Message{}
	for i := range first {
		m := first[i][29]
		last[m.SensorID] = m
	}
	// A different seed too: continuing must not depend on the seed.
	cont := NewFleet(99, 4, last)
	next := run(cont, 30)
	for i := range next {
		prev := first[i][29]
		if next[i][0].SensorID != prev.SensorID {
			t.Fatalf("sensor %d: id %q, want %q", i, next[i][0].SensorID, prev.SensorID)
		}
		if err := telemetry.CheckSuccessor(prev, next[i][0]); err != nil {
			t.Fatalf("sensor %d: %v", i, err)
		}
		if d := distanceKm(prev.Position, next[i][0].Position); d > 1.5 {
			t.Fatalf("sensor %d jumped %.2f km on restart", i, d)
		}
		if next[i][0].Odometry.HoursTot-prev.Odometry.HoursTot > maxHoursStep+0.01 {
			t.Fatalf("sensor %d: hours jumped from %v to %v", i, prev.Odometry.HoursTot, next[i][0].Odometry.HoursTot)
		}
		// Timestamps keep growing even if the clock is behind.
		if next[i][0].Timestamp <= prev.Timestamp {
			t.Fatalf("sensor %d: timestamp went back", i)
		}
	}
}

func TestCountersAreTwoDecimals(t *testing.T) {
	for _, msgs := range run(NewFleet(3, 5, nil), 300) {
		for _, m := range msgs {
			for _, v := range []float64{m.Odometry.HoursTot, m.Odometry.KmTot} {
				if c := v * 100; math.Abs(c-math.Round(c)) > 1e-6 {
					t.Fatalf("%v has more than 2 decimals", v)
				}
			}
		}
	}
}

func TestFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--sensors", "0"}, {"--interval", "0s"}, {"--count", "-1"}, {"--nope"}, {"stray"}, {"--interval", "fast"},
		{"--preload", "-1"}, {"--preload", "10", "--count", "3"}, {"--preload", "10", "--inject-bad", "1"},
	} {
		if _, _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
	cfg, preload, err := parseFlags([]string{"--seed", "7", "--interval", "50ms", "--count", "3", "--topic", "t", "--brokers", "b:1"})
	if err != nil || preload != 0 {
		t.Fatal(preload, err)
	}
	if _, preload, err := parseFlags([]string{"--preload", "1000000"}); err != nil || preload != 1_000_000 {
		t.Fatalf("--preload 1000000: %d %v", preload, err)
	}
	if cfg.Seed != 7 || cfg.Interval != 50*time.Millisecond || cfg.Count != 3 || cfg.Sensors != 10 || cfg.Topic != "t" || cfg.Brokers != "b:1" {
		t.Fatalf("parsed %+v", cfg)
	}
}

func distanceKm(a, b telemetry.Position) float64 {
	north := (b.Lat - a.Lat) * kmPerDegree
	east := (b.Lon - a.Lon) * kmPerDegree * math.Cos(a.Lat*math.Pi/180)
	return math.Hypot(north, east)
}

// Size is the number of machines.
func (f *Fleet) Size() int { return len(f.machines) }
