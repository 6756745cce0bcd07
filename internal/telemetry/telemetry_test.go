package telemetry

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func msg(hours, km float64) Message {
	return Message{SensorID: "sensor-01", Timestamp: 1_700_000_000_000,
		Odometry: Odometry{HoursTot: hours, KmTot: km}, Position: Position{Lat: 45.1, Lon: 9.2}}
}

func TestDecodeRoundTrip(t *testing.T) {
	want := msg(100.25, 2000.5)
	b, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode([]byte("sensor-01"), b)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestDecodeRejectsBadInput(t *testing.T) {
	cases := map[string]struct{ key, value string }{
		"not json":        {"s", "hello"},
		"empty":           {"s", ""},
		"array":           {"s", "[1,2]"},
		"missing id":      {"s", `{"timestamp":1,"odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":1,"lon":1}}`},
		"missing ts":      {"s", `{"sensor_id":"s","odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":1,"lon":1}}`},
		"missing hours":   {"s", `{"sensor_id":"s","timestamp":1,"odometry":{"km_tot":1},"position":{"lat":1,"lon":1}}`},
		"missing km":      {"s", `{"sensor_id":"s","timestamp":1,"odometry":{"hours_tot":1},"position":{"lat":1,"lon":1}}`},
		"missing pos":     {"s", `{"sensor_id":"s","timestamp":1,"odometry":{"hours_tot":1,"km_tot":1}}`},
		"string hours":    {"s", `{"sensor_id":"s","timestamp":1,"odometry":{"hours_tot":"1","km_tot":1},"position":{"lat":1,"lon":1}}`},
		"float ts":        {"s", `{"sensor_id":"s","timestamp":1.5,"odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":1,"lon":1}}`},
		"negative km":     {"s", `{"sensor_id":"s","timestamp":1,"odometry":{"hours_tot":1,"km_tot":-1},"position":{"lat":1,"lon":1}}`},
		"lat out":         {"s", `{"sensor_id":"s","timestamp":1,"odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":91,"lon":1}}`},
		"key mismatch":    {"other", `{"sensor_id":"s","timestamp":1,"odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":1,"lon":1}}`},
		"blank sensor id": {"", `{"sensor_id":" ","timestamp":1,"odometry":{"hours_tot":1,"km_tot":1},"position":{"lat":1,"lon":1}}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(c.key), []byte(c.value))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode(%q) error = %v, want ErrInvalid", c.value, err)
			}
		})
	}
}

func TestCheckSuccessor(t *testing.T) {
	if err := CheckSuccessor(msg(10, 10), msg(10, 10)); err != nil {
		t.Fatalf("idle machine rejected: %v", err)
	}
	if err := CheckSuccessor(msg(10, 10), msg(9.99, 11)); !errors.Is(err, ErrBackwards) {
		t.Fatalf("hours going back: %v", err)
	}
	if err := CheckSuccessor(msg(10, 10), msg(11, 9)); !errors.Is(err, ErrBackwards) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("km going back: %v", err)
	}
}

func TestDelta(t *testing.T) {
	cases := []struct {
		name      string
		prev, cur Message
		hours, km float64
		record    bool
	}{
		{"both grow", msg(100, 2000), msg(102, 2010.5), 2, 10.5, true},
		{"rounding", msg(100.001, 0), msg(100.016, 0.004), 0.02, 0, true},
		{"idle", msg(100, 2000), msg(100, 2000), 0, 0, false},
		{"below a cent", msg(100, 2000), msg(100.004, 2000.004), 0, 0, false},
		{"only km", msg(100, 2000), msg(100, 2000.3), 0, 0.3, true},
		{"replayed older message", msg(120, 2200), msg(100, 2000), -20, -200, false},
	}
	for _, c := range cases {
		u, rec := Delta(c.prev, c.cur)
		if u.DeltaHours != c.hours || u.DeltaKm != c.km || rec != c.record {
			t.Errorf("%s: got %+v record=%v, want %v/%v record=%v", c.name, u, rec, c.hours, c.km, c.record)
		}
		if u.SensorID != "sensor-01" || u.Date != "2023-11-14" {
			t.Errorf("%s: identity %+v", c.name, u)
		}
	}
}

// TestCounterFaultSaysWhichBound: a refused odometer counter names the one
// bound it breaks.
func TestCounterFaultSaysWhichBound(t *testing.T) {
	ok := Message{SensorID: "s", Timestamp: 1, Odometry: Odometry{HoursTot: 1, KmTot: 1}}
	tests := map[string]struct {
		odo  Odometry
		want string
	}{
		"too large": {Odometry{HoursTot: 1e308, KmTot: 1}, "hours_tot 1e+308 is above the maximum of 1e+06"},
		"negative":  {Odometry{HoursTot: 1, KmTot: -2}, "km_tot -2 is negative"},
		"infinite":  {Odometry{HoursTot: math.Inf(1), KmTot: 1}, "hours_tot +Inf is not a finite number"},
		"NaN":       {Odometry{HoursTot: 1, KmTot: math.NaN()}, "km_tot NaN is not a finite number"},
	}
	for name, tc := range tests {
		m := ok
		m.Odometry = tc.odo
		if err := m.Validate(); err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to end with %q", name, err, tc.want)
		}
	}
}
