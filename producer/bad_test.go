package producer

import (
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// TestBadRecordsEveryKind: a cycle of bad records holds every kind, and
// each is judged invalid by the one rule for exactly its kind, given the
// sensor's last valid message as the reference; the fleet is not moved.
func TestBadRecordsEveryKind(t *testing.T) {
	for _, sensors := range []int{1, 3, 10} {
		f := NewFleet(7, sensors, nil)
		now := time.UnixMilli(1_700_000_000_000)
		for i := range sensors {
			f.Next(i, now)
		}
		before := make([]telemetry.Message, sensors)
		for i := range before {
			before[i] = f.Last(i)
		}
		recs := BadRecords(2*BadCycle+1, sensors, f.Last)
		if len(recs) != 2*BadCycle+1 {
			t.Fatalf("got %d records", len(recs))
		}
		kinds := map[telemetry.Kind]int{}
		variants := map[string]bool{}
		for j, r := range recs {
			i := j % sensors
			ref := f.Last(i)
			if r.Key != nil && string(r.Key) != ref.SensorID && r.Kind != telemetry.KeyMismatch {
				t.Errorf("record %d (%s) has key %q, want %q", j, r.Variant, r.Key, ref.SensorID)
			}
			// The reference a consumer holds is the last valid message of
			// the sensor named by sensor_id in the record's own partition.
			_, err := telemetry.Check(r.Key, r.Value, &ref)
			if got := telemetry.KindOf(err); got != r.Kind {
				t.Errorf("record %d (%s, key %q, value %s): judged %v, want kind %s", j, r.Variant, r.Key, r.Value, err, r.Kind)
			}
			// Without a reference only backwards is undetectable.
			_, err = telemetry.Decode(r.Key, r.Value)
			if (err == nil) != (r.Kind == telemetry.Backwards) {
				t.Errorf("record %d (%s): Decode without reference: %v", j, r.Variant, err)
			}
			kinds[r.Kind]++
			variants[r.Variant] = true
		}
		for _, k := range telemetry.Kinds {
			if kinds[k] == 0 {
				t.Errorf("%d sensors: no record of kind %s", sensors, k)
			}
		}
		if len(variants) != BadCycle {
			t.Errorf("%d sensors: %d variants, want %d", sensors, len(variants), BadCycle)
		}
		for i := range before {
			if f.Last(i) != before[i] {
				t.Errorf("sensor %d moved: %+v -> %+v", i, before[i], f.Last(i))
			}
		}
	}
	if got := BadRecords(0, 3, func(int) telemetry.Message { return telemetry.Message{} }); len(got) != 0 {
		t.Errorf("BadRecords(0) = %d records", len(got))
	}
}
