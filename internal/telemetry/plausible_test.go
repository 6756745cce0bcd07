package telemetry

import (
	"strings"
	"testing"
)

// reading is sensor-01 at minute min after a fixed instant.
func reading(min float64, hours, km float64) Message {
	return Message{SensorID: "sensor-01", Timestamp: 1_700_000_000_000 + int64(min*60_000),
		Odometry: Odometry{HoursTot: hours, KmTot: km}, Position: Position{Lat: 45.1, Lon: 9.2}}
}

// TestCheckSuccessorRule: the successor rule case by case, at its edges.
func TestCheckSuccessorRule(t *testing.T) {
	prev := reading(0, 2619.55, 5000)
	moved := prev
	moved.Position.Lat = 45.2
	cases := []struct {
		name string
		next Message
		want Kind // "" = valid
	}{
		{"idle, a minute later", reading(1, 2619.55, 5000), ""},
		{"a simulated step 1 ms later", reading(1.0/60_000, 2619.75, 5001.2), ""},
		{"the allowance exactly, no time elapsed but 1 ms", reading(1.0/60_000, 2620.55, 5060), ""},
		{"just past the allowance", reading(1.0/60_000, 2620.57, 5000), Jump},
		{"km past top speed", reading(1.0/60_000, 2619.60, 5060.5), Jump},
		{"a day later, a day of hours", reading(24*60, 2619.55+24, 5000+24*60), ""},
		{"a day later, 26 hours", reading(24*60, 2619.55+26, 5000), Jump},
		{"the 999999 jump", reading(0.5, 999999, 999999), Jump},
		{"the 999999 jump 120 years later is a clock question", reading(120*365.25*24*60, 999999, 999999), ""},
		{"same timestamp, same reading: a duplicate", prev, ""},
		{"same timestamp, counters moved", reading(0, 2619.60, 5000), Jump},
		{"same timestamp, elsewhere", moved, Jump},
		{"a day back in time", reading(-24*60, 2619.55, 5000), Backwards},
		{"1 ms back in time", reading(-1.0/60_000, 2619.55, 5000), Backwards},
		{"hours back", reading(1, 2619.54, 5000), Backwards},
		{"km back", reading(1, 2619.55, 4999.99), Backwards},
	}
	// A reference many messages back (consumer-usage's checkpoint after it
	// skipped to latest): each message between is a step of its own.
	far := reading(0.6, 2619.55+36.2, 5000+36)
	if err := CheckSuccessorAfter(prev, far, 800); err != nil {
		t.Errorf("36 h ahead 800 messages on: %v", err)
	}
	if err := CheckSuccessorAfter(prev, far, 1); KindOf(err) != Jump {
		t.Errorf("36 h ahead on the next message: %v, want a jump", err)
	}
	if err := CheckSuccessorAfter(prev, reading(0.6, 999999, 999999), 800); KindOf(err) != Jump {
		t.Errorf("999999 h 800 messages on: %v, want a jump", err)
	}
	for _, c := range cases {
		err := CheckSuccessor(prev, c.next)
		if KindOf(err) != c.want || (c.want == "") != (err == nil) {
			t.Errorf("%s: %v, want kind %q", c.name, err, c.want)
		}
	}
}

// TestJumpNeverBecomesTheReference: after a jump, the real readings go on
// being judged against the last good one, and yield their real usage.
func TestJumpNeverBecomesTheReference(t *testing.T) {
	v := NewValidator()
	enc := func(m Message) []byte {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	k := []byte("sensor-01")
	stream := []Message{reading(0, 100, 200), reading(1, 100.2, 200.5), reading(1.5, 999999, 999999),
		reading(2, 100.4, 201), reading(3, 100.6, 201.5)}
	var usage float64
	var last *Message
	for i, m := range stream {
		got, verdict, err := v.Judge(0, int64(i), k, enc(m))
		if i == 2 {
			if verdict != Invalid || KindOf(err) != Jump || !strings.Contains(err.Error(), "100.20 -> 999999.00") {
				t.Fatalf("the jump: %v %v", verdict, err)
			}
			continue
		}
		if verdict != Valid {
			t.Fatalf("reading %d after the jump: %v %v", i, verdict, err)
		}
		if last != nil {
			u, _ := Delta(*last, got)
			usage += u.DeltaHours
		}
		last = &got
	}
	if Round2(usage) != 0.6 {
		t.Fatalf("usage %.2f h, want 0.60", usage)
	}
}

// TestWhatCountsAsValid: the cases docs/faults.md decides, one by one.
func TestWhatCountsAsValid(t *testing.T) {
	cases := []struct {
		name, key, value string
		want             Kind
	}{
		{"lat 999", "sensor-01", withField(`"lat":45`, `"lat":999`), Absurd},
		{"lon -181", "sensor-01", withField(`"lon":9`, `"lon":-181`), Absurd},
		{"SENSOR-01: a sensor of its own", "SENSOR-01", withField(`"sensor-01"`, `"SENSOR-01"`), ""},
		{"trailing space", "sensor-01 ", withField(`"sensor-01"`, `"sensor-01 "`), Malformed},
		{"leading tab", "\tsensor-01", withField(`"sensor-01"`, `"\tsensor-01"`), Malformed},
		{"key with a space, id without", "sensor-01 ", good, KeyMismatch},
		{"sensor_id twice", "sensor-01", withField(`"sensor_id":"sensor-01",`, `"sensor_id":"sensor-02","sensor_id":"sensor-01",`), Malformed},
		{"hours twice", "sensor-01", withField(`"hours_tot":100`, `"hours_tot":999999,"hours_tot":100`), Malformed},
		{"lat twice, escaped", "sensor-01", withField(`"lat":45`, `"lat":1,"l\u0061t":45`), Malformed},
		{"a key twice in an extra object", "sensor-01", withField(`{"sensor_id"`, `{"extra":{"a":1,"a":2},"sensor_id"`), Malformed},
		{"the same key in two objects", "sensor-01", withField(`{"sensor_id"`, `{"extra":[{"a":1},{"a":2}],"sensor_id"`), ""},
		{"an upper-case field name is another field", "sensor-01", withField(`"sensor_id"`, `"SENSOR_ID"`), MissingField},
		{"an upper-case nested name too", "sensor-01", withField(`"km_tot"`, `"KM_TOT"`), MissingField},
	}
	for _, c := range cases {
		m, err := Check([]byte(c.key), []byte(c.value), nil)
		if KindOf(err) != c.want || (c.want == "") != (err == nil) {
			t.Errorf("%s: %v, want kind %q", c.name, err, c.want)
			continue
		}
		if err == nil && m.SensorID != c.key {
			t.Errorf("%s: sensor %q, want %q", c.name, m.SensorID, c.key)
		}
	}
}
