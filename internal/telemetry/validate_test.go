package telemetry

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

const good = `{"sensor_id":"sensor-01","timestamp":1700000000000,"odometry":{"hours_tot":100,"km_tot":200},"position":{"lat":45,"lon":9}}`

func withField(old, repl string) string {
	if !strings.Contains(good, old) {
		panic(old)
	}
	return strings.Replace(good, old, repl, 1)
}

// TestCheckEveryKind: one case per way a record can be bad, each with the
// kind the rule must name; a case of each kind is required.
func TestCheckEveryKind(t *testing.T) {
	prev := msg(100, 200)
	prev.SensorID = "sensor-01"
	cases := []struct {
		name, key, value string
		want             Kind
	}{
		{"not json", "sensor-01", "this is not JSON", NotJSON},
		{"empty value", "sensor-01", "", NotJSON},
		{"truncated", "sensor-01", good[:30], NotJSON},
		{"bare NaN", "sensor-01", withField(`"km_tot":200`, `"km_tot":NaN`), NotJSON},
		{"missing sensor_id", "sensor-01", withField(`"sensor_id":"sensor-01",`, ``), MissingField},
		{"null timestamp", "sensor-01", withField(`1700000000000`, `null`), MissingField},
		{"missing odometry", "sensor-01", withField(`"odometry":{"hours_tot":100,"km_tot":200},`, ``), MissingField},
		{"missing km", "sensor-01", withField(`,"km_tot":200`, ``), MissingField},
		{"missing lon", "sensor-01", withField(`,"lon":9`, ``), MissingField},
		{"blank sensor_id", " ", withField(`"sensor-01"`, `" "`), MissingField},
		{"array", "sensor-01", `[1,2]`, WrongType},
		{"string value", "sensor-01", `"hello"`, WrongType},
		{"string hours", "sensor-01", withField(`"hours_tot":100`, `"hours_tot":"100"`), WrongType},
		{"bool lat", "sensor-01", withField(`"lat":45`, `"lat":true`), WrongType},
		{"float timestamp", "sensor-01", withField(`1700000000000`, `1.5`), WrongType},
		{"string timestamp", "sensor-01", withField(`1700000000000`, `"yesterday"`), WrongType},
		{"numeric sensor_id", "sensor-01", withField(`"sensor-01"`, `1`), WrongType},
		{"odometry array", "sensor-01", withField(`{"hours_tot":100,"km_tot":200}`, `[100,200]`), WrongType},
		{"negative km", "sensor-01", withField(`"km_tot":200`, `"km_tot":-1`), Absurd},
		{"NaN string", "sensor-01", withField(`"km_tot":200`, `"km_tot":"NaN"`), Absurd},
		{"Infinity string", "sensor-01", withField(`"hours_tot":100`, `"hours_tot":"-Infinity"`), Absurd},
		{"1e308", "sensor-01", withField(`"km_tot":200`, `"km_tot":1e308`), Absurd},
		{"1e999", "sensor-01", withField(`"hours_tot":100`, `"hours_tot":1e999`), Absurd},
		{"lat out of range", "sensor-01", withField(`"lat":45`, `"lat":91`), Absurd},
		{"timestamp year 5000", "sensor-01", withField(`1700000000000`, `95617584000000`), Absurd},
		{"negative timestamp", "sensor-01", withField(`1700000000000`, `-5`), Absurd},
		{"timestamp beyond int64", "sensor-01", withField(`1700000000000`, `99999999999999999999`), Absurd},
		{"empty key", "", good, EmptyKey},
		{"key mismatch", "sensor-02", good, KeyMismatch},
		{"backwards hours", "sensor-01", withField(`"hours_tot":100`, `"hours_tot":99.99`), Backwards},
		{"backwards km", "sensor-01", withField(`"km_tot":200`, `"km_tot":150`), Backwards},
	}
	seen := map[Kind]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev := prev
			prev.Odometry = Odometry{HoursTot: 100, KmTot: 200}
			if c.want != Backwards {
				prev.Odometry = Odometry{HoursTot: 1, KmTot: 1}
			}
			m, err := Check([]byte(c.key), []byte(c.value), &prev)
			if !errors.Is(err, ErrInvalid) || KindOf(err) != c.want {
				t.Fatalf("Check(%q, %q) = %v (kind %q), want kind %q", c.key, c.value, err, KindOf(err), c.want)
			}
			if m != (Message{}) {
				t.Fatalf("an invalid record yielded a message: %+v", m)
			}
			if !strings.HasPrefix(err.Error(), string(c.want)+": ") {
				t.Fatalf("reason %q does not start with its kind", err)
			}
			seen[c.want] = true
		})
	}
	for _, k := range Kinds {
		if !seen[k] {
			t.Errorf("no case of kind %s", k)
		}
	}
}

func TestCheckAcceptsGood(t *testing.T) {
	prev := Message{SensorID: "sensor-01", Odometry: Odometry{HoursTot: 100, KmTot: 200}}
	for name, v := range map[string]string{
		"same odometers (idle)": good,
		"exponent timestamp":    withField(`1700000000000`, `1.7e12`),
		"other sensor's prev":   withField(`"hours_tot":100`, `"hours_tot":1`),
	} {
		p := prev
		if name == "other sensor's prev" {
			p.SensorID = "sensor-02" // not compared: another sensor
		}
		m, err := Check([]byte("sensor-01"), []byte(v), &p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if m.SensorID != "sensor-01" || math.IsNaN(m.Odometry.KmTot) {
			t.Errorf("%s: %+v", name, m)
		}
	}
}

// TestValidatorReference: backwards is judged against the last VALID
// record of the sensor in its partition; replays are neither.
func TestValidatorReference(t *testing.T) {
	v := NewValidator()
	// One reading a minute: offset n is read at minute n.
	rec := func(h, km float64, minute int64) []byte {
		b, err := json.Marshal(Message{SensorID: "sensor-01", Timestamp: 1_700_000_000_000 + minute*60_000,
			Odometry: Odometry{HoursTot: h, KmTot: km}, Position: Position{Lat: 45, Lon: 9}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	k := []byte("sensor-01")
	steps := []struct {
		p     int32
		off   int64
		value []byte
		want  Verdict
		kind  Kind
	}{
		{0, 0, rec(100, 200, 0), Valid, ""},
		{0, 1, rec(50, 200, 1), Invalid, Backwards},   // below offset 0
		{0, 2, rec(100.5, 201, 2), Valid, ""},         // compared with offset 0, not the bad 1
		{0, 3, rec(1e6+1, 201, 3), Invalid, Absurd},   // absurd: never the reference
		{0, 4, rec(100.6, 202, 4), Valid, ""},         // so this is not backwards
		{0, 1, rec(50, 200, 1), Replay, ""},           // re-delivered: not counted again
		{0, 2, rec(100.5, 201, 2), Replay, ""},        // a replayed valid record is no poison
		{1, 0, rec(10, 10, 0), Valid, ""},             // another partition: its own reference
		{0, 5, []byte("{"), Invalid, NotJSON},         // position moves past invalid records too
		{0, 5, []byte("{"), Replay, ""},               // ... so they are judged once
		{0, 6, rec(100.6, 202, 6), Valid, ""},         // idle
		{0, 7, rec(999999, 999999, 7), Invalid, Jump}, // a jump: never the reference
		{0, 8, rec(100.8, 203, 8), Valid, ""},         // judged against offset 6
	}
	for i, s := range steps {
		_, got, err := v.Judge(s.p, s.off, k, s.value)
		if got != s.want || KindOf(err) != s.kind {
			t.Fatalf("step %d (p%d@%d): %v %v, want %v %q", i, s.p, s.off, got, err, s.want, s.kind)
		}
	}
	v.Forget(0)
	if _, got, _ := v.Judge(0, 0, k, rec(1, 1, 0)); got != Valid {
		t.Fatalf("after Forget, a restarted log's first record is %v", got)
	}
}

// A restored validator judges what follows as the one it was taken from.
func TestRestoreValidator(t *testing.T) {
	enc := func(id string, ts int64, hours, km float64) []byte {
		b, err := Encode(Message{SensorID: id, Timestamp: ts, Odometry: Odometry{HoursTot: hours, KmTot: km}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	orig := NewValidator()
	orig.Judge(0, 0, []byte("s1"), enc("s1", 1, 10, 100))
	orig.Judge(0, 1, []byte("s2"), enc("s2", 1, 5, 50))
	orig.Judge(1, 0, []byte("s1"), enc("s1", 2, 20, 200))
	restored := RestoreValidator(orig.Judged(), orig.References())
	if got := len(restored.References()); got != 3 {
		t.Fatalf("%d references, want 3", got)
	}
	for _, next := range []struct {
		p     int32
		off   int64
		key   string
		value []byte
	}{
		{0, 1, "s2", enc("s2", 1, 5, 50)},     // judged already: a replay
		{0, 2, "s1", enc("s1", 3, 9, 100)},    // backwards against s1's reference in partition 0
		{0, 3, "s1", enc("s1", 4, 11, 110)},   // valid
		{1, 1, "s1", enc("s1", 5, 19, 300)},   // backwards in partition 1
		{2, 0, "s1", enc("s1", 6, 1, 1)},      // a partition never read: no reference
		{0, 4, "s2", []byte(`{"sensor_id":`)}, // not JSON
	} {
		_, want, wantErr := orig.Judge(next.p, next.off, []byte(next.key), next.value)
		_, got, gotErr := restored.Judge(next.p, next.off, []byte(next.key), next.value)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%d/%d: restored says %s (%v), the original %s (%v)", next.p, next.off, got, gotErr, want, wantErr)
		}
	}
}
