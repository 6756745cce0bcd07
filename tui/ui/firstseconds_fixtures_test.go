package ui

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// sceneFirstSeconds: two seconds in. The producer has sent one interval
// and not yet said its fleet; consumer-usage has checkpointed 4 sensors
// (nothing recorded yet) and not the 6 others, so the audit has no window
// for them; its lag is one interval in flight.
func sceneFirstSeconds() *scene {
	s := sceneStartup()
	s.status(board.Usage, 1.2, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"})
	s.status(board.Usage, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	s.status(board.Current, 1.2, status.Event{Type: status.Started, GroupID: "demo-current-1a2b3c4d"})
	s.status(board.Current, 1.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.6, status.Event{Type: status.CaughtUp, Processed: 0, Millis: 310})
	s.status(board.Usage, 1.7, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Query, 1.3, status.Event{Type: status.Listening, Endpoint: "http", Addr: "127.0.0.1:38080"})
	s.status(board.Producer, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	s.tick(2)
	s.apply(board.Offsets{At: at(2), HighWatermarks: hwm(nSensors)})
	s.apply(board.Committed{At: at(2), Group: "demo-usage", Offsets: hwm(0)})
	s.status(board.Producer, 2, status.Event{Type: status.Progress, Produced: nSensors})
	s.status(board.Current, 2, status.Event{Type: status.Progress, Processed: nSensors})
	s.apply(embeddedPartitions(2))
	s.apply(board.SensorsSnapshot{At: at(2), CaughtUp: true, Sensors: sensorsAt(0, 2)})
	var lines []board.UsageTotals
	for i := range 4 {
		lines = append(lines, board.UsageTotals{SensorID: sensorID(i), Expect: board.ExpectReady})
	}
	s.apply(board.UsageSnapshot{At: at(2), Sensors: lines})
	s.apply(board.TruthSnapshot{At: at(2), AuditOffset: nSensors, Sensors: truthAt(0, 2)})
	for _, name := range []string{board.Current, board.Usage} {
		s.apply(board.HealthProbe{Name: name, PID: s.b.Process(name).PID, At: at(2), Code: 200, Status: "ok", StuckAfter: 10 * time.Second})
	}
	return s.tick(2.4)
}
