package lab

import (
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// A read of the checkpoints serves later cuts only while nothing it could
// miss may have happened.
func TestCheckpointReadCurrent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	two := map[string]store.Checkpoint{"a": {SensorID: "a"}, "b": {SensorID: "b"}}
	read := checkpointRead{epoch: 1, at: t0, cps: two}
	counted := func(ids ...string) map[string]store.Covered {
		m := map[string]store.Covered{}
		for _, id := range ids {
			m[id] = store.Covered{}
		}
		return m
	}
	tests := []struct {
		name    string
		read    checkpointRead
		epoch   int
		covered map[string]store.Covered
		sensors int
		now     time.Time
		want    bool
	}{
		{"the same sensors, a second later", read, 1, counted("a", "b"), 2, t0.Add(time.Second), true},
		{"a sensor counted with none but checkpointed", read, 1, counted("a"), 2, t0.Add(time.Second), true},
		{"no read yet", checkpointRead{}, 0, counted(), 2, t0, false},
		{"a reset-lab since", read, 2, counted("a"), 2, t0.Add(time.Second), false},
		{"a sensor the read lacks", read, 1, counted("a", "c"), 2, t0.Add(time.Second), false},
		{"fewer checkpoints than sensors", read, 1, counted("a", "b"), 3, t0.Add(time.Second), false},
		{"too old", read, 1, counted("a", "b"), 2, t0.Add(checkpointsMaxAge), false},
	}
	for _, tc := range tests {
		if got := tc.read.current(tc.epoch, tc.covered, tc.sensors, tc.now); got != tc.want {
			t.Errorf("%s: current = %v, want %v", tc.name, got, tc.want)
		}
	}
}
