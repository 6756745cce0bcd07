package producer

import (
	"testing"
	"time"
)

// A parked sensor publishes nothing, and a run with --count still ends
// once the others reached it.
func TestParkedSensorPublishesNothing(t *testing.T) {
	brokers := startBroker(t)
	cfg := Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: 5 * time.Millisecond, Seed: 7, Count: 5, Park: "sensor-02"}
	runProducer(t, cfg)
	_, count := lastPerSensor(t, readAll(t, brokers))
	if len(count) != 2 || count["sensor-01"] != 5 || count["sensor-03"] != 5 || count["sensor-02"] != 0 {
		t.Fatalf("messages per sensor %v, want 5 of sensor-01 and sensor-03, none of sensor-02", count)
	}
}
