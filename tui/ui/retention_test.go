package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// T asks before it gives the topic a short retention (what it deletes is
// gone): y asks the lab, any other key cancels; once the board shows a
// retention, T says so and asks nothing.
func TestRetentionAsksFirst(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "T")
	if v := m.View(); !strings.Contains(v, "give sensor-data a short retention? Its oldest records are deleted for good") {
		t.Fatalf("T does not ask:\n%s", v)
	}
	m = press(t, m, "n")
	if len(ctl.Calls()) != 0 {
		t.Fatalf("T acted without a y: %q", ctl.Calls())
	}
	if v := m.View(); !strings.Contains(v, "T cancelled: sensor-data keeps its retention") {
		t.Fatalf("no cancel note:\n%s", v)
	}
	m = press(t, m, "T")
	m = press(t, m, "y")
	if got := ctl.Calls(); !slices.Equal(got, []string{"retention sensor-data"}) {
		t.Fatalf("y: calls %q", got)
	}
	s := sceneRunning()
	s.apply(board.RetentionSet{At: at(70), Topic: "sensor-data", Retention: 20 * time.Second})
	ctl = &fakeController{}
	m = newModel(s, ctl)
	m = press(t, m, "T")
	if v := m.View(); !strings.Contains(v, "T: sensor-data already has a retention of 20s") || m.(Model).confirm != nil {
		t.Fatalf("T with a retention set:\n%s", v)
	}
}

// sceneRetention: sceneRunning with a retention of 20 s set at 40 s; by 64
// s it deleted the oldest records of p0 and p2 (the watermarks of 64 s,
// with their log starts).
func sceneRetention() *scene {
	s := sceneRunning()
	s.apply(board.RetentionSet{At: at(40), Topic: "sensor-data", Retention: 20 * time.Second})
	h := hwm(63 * nSensors)
	s.apply(board.Offsets{At: at(63.5), HighWatermarks: h, LogStarts: map[int32]int64{0: 0, 1: 0, 2: 0}})
	s.apply(board.Offsets{At: at(64.2), HighWatermarks: h, LogStarts: map[int32]int64{0: 80, 1: 0, 2: 77}})
	return s.tick(64.4)
}

// sceneForgotten: sceneRetention where the audit read an eleventh sensor,
// parked since p2@5, that consumer-current's replay could not rebuild: its
// last message was deleted by retention.
func sceneForgotten() *scene {
	s := sceneRetention()
	truth := truthAt(63, 64)
	parked := board.SensorState{SensorID: "sensor-11", Timestamp: at(1).UnixMilli(), HoursTot: 12, KmTot: 40, Partition: 2, Offset: 5}
	truth = append(truth, board.Truth{SensorID: "sensor-11", Last: &parked, Valid: 1, Partitions: []int32{2}})
	s.apply(board.TruthSnapshot{At: at(64.3), AuditOffset: 631, Sensors: truth})
	s.apply(board.SensorsSnapshot{At: at(64.3), CaughtUp: true, Sensors: sensorsAt(63, 64)})
	return s.tick(64.5)
}
