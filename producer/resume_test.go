package producer

import (
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// A restarted producer continues from the last reading the consumers
// take: not from a jump ahead, nor from a reading behind.
func TestResumeSkipsWhatTheRuleRefuses(t *testing.T) {
	r := &resumeRead{last: map[string]telemetry.Message{}}
	at := func(ts int64, hours, km float64) *kafka.Message {
		v, err := telemetry.Encode(telemetry.Message{SensorID: "sensor-02", Timestamp: 1_796_000_000_000 + ts,
			Odometry: telemetry.Odometry{HoursTot: hours, KmTot: km}, Position: telemetry.Position{Lat: 45, Lon: 9}})
		if err != nil {
			t.Fatal(err)
		}
		return &kafka.Message{Key: []byte("sensor-02"), Value: v}
	}
	r.add(at(0, 2619.55, 5000))
	r.add(at(1000, 999999, 999999)) // a jump
	r.add(at(2000, 2619.40, 5000))  // behind
	r.add(at(3000, 2619.75, 5000.5))
	if got := r.last["sensor-02"].Odometry; got.HoursTot != 2619.75 || got.KmTot != 5000.5 {
		t.Fatalf("continues from %+v, want 2619.75 h, 5000.5 km", got)
	}
}
