package current

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func value(t *testing.T, id string, ts int64, hours, km float64) []byte {
	t.Helper()
	b, err := telemetry.Encode(telemetry.Message{SensorID: id, Timestamp: ts,
		Odometry: telemetry.Odometry{HoursTot: hours, KmTot: km}, Position: telemetry.Position{Lat: 45, Lon: 9}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apply judges and applies one record as a reader does.
func apply(s *state, p int32, offset int64, key, value []byte) error {
	j := s.judge(s.validator(p), p, offset, key, value)
	s.applyBatch([]judged{j})
	return j.err
}

func TestLastValidMessageWins(t *testing.T) {
	s := newState("g")
	s.assign(map[int32]int64{0: 0}, map[int32]int64{0: 6})
	steps := []struct {
		key, value []byte
		invalid    bool
	}{
		{[]byte("a"), value(t, "a", 1, 10, 20), false},
		{[]byte("a"), value(t, "a", 2, 11, 22), false},
		{[]byte("a"), []byte("garbage"), true},
		{[]byte("a"), value(t, "a", 3, 9, 22), true},   // hours went backwards
		{[]byte("b"), value(t, "a", 3, 12, 23), true},  // key disagrees
		{[]byte("a"), value(t, "a", 4, 11, 22), false}, // idle: same counters
	}
	for i, st := range steps {
		err := apply(s, 0, int64(i), st.key, st.value)
		if (err != nil) != st.invalid {
			t.Fatalf("step %d: err=%v, want invalid=%v", i, err, st.invalid)
		}
		if err != nil && !errors.Is(err, telemetry.ErrInvalid) {
			t.Fatalf("step %d: %v is not ErrInvalid", i, err)
		}
	}
	v := s.view()
	if v.Processed != 6 || v.Invalid != 3 || len(v.Sensors) != 1 {
		t.Fatalf("view %+v", v)
	}
	if got := v.Sensors[0]; got.Offset != 5 || got.Timestamp != 4 || got.Odometry.HoursTot != 11 {
		t.Fatalf("sensor a = %+v", got)
	}
	if !v.CaughtUp && !func() bool { first, _, _ := s.checkCaughtUp(); return first }() {
		t.Fatal("not caught up at the target")
	}
	if len(v.Positions) != 1 || v.Positions[0].Offset != 6 {
		t.Fatalf("positions %+v", v.Positions)
	}
}

func TestCaughtUpNeedsEveryPartition(t *testing.T) {
	s := newState("g")
	if first, _, _ := s.checkCaughtUp(); first {
		t.Fatal("caught up with nothing assigned")
	}
	// Partition 1 is empty (low == high): caught up from the start.
	s.assign(map[int32]int64{0: 3, 1: 5, 2: 0}, map[int32]int64{0: 5, 1: 5, 2: -1})
	if first, _, _ := s.checkCaughtUp(); first {
		t.Fatal("caught up before reading anything")
	}
	_ = apply(s, 0, 3, []byte("a"), value(t, "a", 1, 1, 1))
	_ = apply(s, 0, 4, []byte("a"), value(t, "a", 2, 2, 2))
	if first, _, _ := s.checkCaughtUp(); first {
		t.Fatal("caught up while partition 2's target is unknown")
	}
	s.setTarget(2, 0, 0)
	first, processed, _ := s.checkCaughtUp()
	if !first || processed != 2 {
		t.Fatalf("checkCaughtUp = %v, %d", first, processed)
	}
	if again, _, _ := s.checkCaughtUp(); again {
		t.Fatal("CaughtUp reported twice")
	}
}

func TestStateEndpoint(t *testing.T) {
	s := newState("demo-current-0123abcd")
	s.assign(map[int32]int64{0: 0, 1: 0}, map[int32]int64{0: 1, 1: 0})
	_ = apply(s, 0, 0, []byte("sensor-02"), value(t, "sensor-02", 5, 1.5, 2.25))
	_ = apply(s, 0, 1, []byte("sensor-01"), value(t, "sensor-01", 6, 3, 4))
	srv := httptest.NewServer(s.handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"group_id", "caught_up", "processed", "invalid", "positions", "sensors"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("/state lacks %q: %v", k, raw)
		}
	}
	sensors := raw["sensors"].([]any)
	first := sensors[0].(map[string]any)
	if first["sensor_id"] != "sensor-01" || first["offset"].(float64) != 1 || first["odometry"].(map[string]any)["hours_tot"].(float64) != 3 {
		t.Fatalf("first sensor %v", first)
	}
	pos := raw["positions"].([]any)[1].(map[string]any)
	if pos["partition"].(float64) != 1 || pos["high_watermark"].(float64) != 0 {
		t.Fatalf("positions %v", raw["positions"])
	}

	resp2, err := http.Get(srv.URL + "/healthz")
	if err != nil || resp2.StatusCode != 200 {
		t.Fatalf("/healthz: %v %v", resp2, err)
	}
	resp2.Body.Close()
	resp3, err := http.Post(srv.URL+"/state", "text/plain", strings.NewReader(""))
	if err != nil || resp3.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /state: %v %v", resp3, err)
	}
	resp3.Body.Close()
}

func TestGroupIDIsFreshEachTime(t *testing.T) {
	a, b := NewGroupID(), NewGroupID()
	if a == b || !strings.HasPrefix(a, "demo-current-") || len(a) != len("demo-current-")+8 {
		t.Fatalf("group ids %q %q", a, b)
	}
}

// TestReplayAfterReassignIsNotInvalid: after a rebalance that hands the
// partition back from the start (a reconnect), the records already applied
// are replays: not counted as invalid, not applied over newer state; a
// poison record is counted once, not once per delivery.
func TestReplayAfterReassignIsNotInvalid(t *testing.T) {
	s := newState("g")
	recs := [][]byte{value(t, "a", 1, 10, 20), []byte("garbage"), value(t, "a", 2, 11, 22), value(t, "a", 3, 12, 23)}
	deliver := func() {
		for i, v := range recs {
			_ = apply(s, 0, int64(i), []byte("a"), v)
		}
	}
	s.assign(map[int32]int64{0: 0}, map[int32]int64{0: 4})
	deliver()
	s.revoke()
	s.assign(map[int32]int64{0: 0}, map[int32]int64{0: 4})
	deliver() // everything again, from earliest
	v := s.view()
	if v.Invalid != 1 {
		t.Fatalf("invalid = %d after a replay, want 1 (the garbage record, once)", v.Invalid)
	}
	if got := v.Sensors[0]; got.Offset != 3 || got.Odometry.HoursTot != 12 {
		t.Fatalf("a replay moved sensor a back: %+v", got)
	}
}

// A batch that runs past the targets is caught up at the record that
// completes the last partition: processed counts no record after it.
func TestCaughtUpAtTheRecordThatCompletes(t *testing.T) {
	s := newState("g")
	s.assign(map[int32]int64{0: 0, 1: 0}, map[int32]int64{0: 2, 1: 3})
	var b []judged
	add := func(p int32, off int64) {
		b = append(b, s.judge(s.validator(p), p, off, []byte("a"), value(t, "a", off+1, float64(off), float64(off))))
	}
	add(0, 0)
	add(1, 0)
	add(0, 1) // partition 0 done
	add(0, 2) // past its target: new since the assignment
	add(1, 1)
	add(1, 2) // partition 1 done: caught up here, 6 processed
	add(1, 3)
	if caughtUp, _, _ := s.applyBatch(b[:3]); caughtUp {
		t.Fatal("caught up with partition 1 behind")
	}
	if caughtUp, processed, _ := s.applyBatch(b[3:]); !caughtUp || processed != 6 {
		t.Fatalf("applyBatch = %v, %d; want caught up at 6 processed", caughtUp, processed)
	}
	if v := s.view(); v.Processed != 7 || !v.CaughtUp {
		t.Fatalf("view %+v", v)
	}
	if again, _, _ := s.applyBatch(nil); again {
		t.Fatal("caught up twice")
	}
	if first, _, _ := s.checkCaughtUp(); first {
		t.Fatal("checkCaughtUp after applyBatch reported it again")
	}
}
