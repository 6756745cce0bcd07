package ui

import (
	"fmt"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// sceneAcksLost: a cluster whose producer writes with acks=1; broker-1,
// leader of p2, was killed while its followers were frozen; broker-2 took
// over from the ISR and the audit found five acknowledged writes of p2 not
// in the topic.
func sceneAcksLost() *scene {
	procs := []string{board.Producer, board.Current, board.Usage, board.Query, "broker-1", "broker-2", "broker-3", board.Store}
	s := &scene{b: board.New(procs, board.Config{RunDir: "/tmp/krl/run-20260301-100000", Topic: "sensor-data",
		Brokers: "127.0.0.1:39092,127.0.0.1:39093,127.0.0.1:39094"})}
	s.tick(0)
	for i, n := range []string{"broker-1", "broker-2", "broker-3"} {
		s.apply(board.ProcStarted{Name: n, PID: 4101 + i, At: at(0)})
		s.status(n, 0.3, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: fmt.Sprintf("127.0.0.1:%d", 39092+i)})
	}
	s.apply(board.ProcStarted{Name: board.Store, PID: 4104, At: at(0)})
	s.status(board.Store, 0.4, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:37017"})
	for i, n := range []string{board.Current, board.Usage, board.Query, board.Producer} {
		s.apply(board.ProcStarted{Name: n, PID: 4110 + i, At: at(0.5)})
	}
	s.status(board.Producer, 0.6, status.Event{Type: status.Started, Acks: "all"})
	s.status(board.Usage, 1.2, status.Event{Type: status.Started, Mode: "guarded", Reset: "latest", GroupID: "demo-usage"})
	s.status(board.Usage, 1.7, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.6, status.Event{Type: status.CaughtUp, Processed: 0, Millis: 310})
	s.status(board.Query, 1.3, status.Event{Type: status.Listening, Endpoint: "http", Addr: "127.0.0.1:38080"})
	s.status(board.Producer, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	all := []int32{1, 2, 3}
	s.apply(partitionsOf(1, 2, pmeta(0, 2, all, all), pmeta(1, 3, all, all), pmeta(2, 1, all, all)))
	s.apply(board.AcksSetting{At: at(20), Acks: "1"})
	s.status(board.Producer, 20.5, status.Event{Type: status.AcksSet, Acks: "1", Count: 10, Millis: 31})
	for sec := 2; sec <= 64; sec++ {
		total := int64(min(sec, 62)-1) * nSensors
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage", Offsets: hwm(total - 3)})
		s.status(board.Producer, float64(sec), status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
	}
	s.apply(board.ProcFrozen{Name: "broker-2", PID: 4102, At: at(40), Frozen: true})
	s.apply(board.ProcFrozen{Name: "broker-3", PID: 4103, At: at(40), Frozen: true})
	s.apply(board.ProcExited{Name: "broker-1", PID: 4101, At: at(41), Signal: "SIGKILL"})
	s.apply(board.ProcFrozen{Name: "broker-2", PID: 4102, At: at(41.1), Frozen: false})
	s.apply(board.ProcFrozen{Name: "broker-3", PID: 4103, At: at(41.1), Frozen: false})
	two := []int32{2, 3}
	s.apply(partitionsOf(46, 2, pmeta(0, 2, all, two), pmeta(1, 3, all, two), pmeta(2, 2, all, two)))
	var lost []board.LostWrite
	for i, id := range []string{"sensor-01", "sensor-04", "sensor-05", "sensor-07", "sensor-08"} {
		lost = append(lost, board.LostWrite{Partition: 2, Offset: int64(1740 + i), Sensor: id, Timestamp: at(40.5).UnixMilli(), Acks: "1"})
	}
	s.apply(board.AckedCheck{At: at(48), Acknowledged: 5270, Missing: lost,
		Latest: map[int32]board.AckedRecord{2: {Partition: 2, Offset: 1800, Sensor: "sensor-08", Timestamp: at(47).UnixMilli(), Acks: "1"}}})
	s.apply(partitionsOf(64, 2, pmeta(0, 2, all, two), pmeta(1, 3, all, two), pmeta(2, 2, all, two)))
	n := 61
	s.apply(board.SensorsSnapshot{At: at(64), CaughtUp: true, Sensors: sensorsAt(n, 64)})
	s.apply(board.UsageSnapshot{At: at(64), Sensors: usageAt(n, nil)})
	s.apply(board.TruthSnapshot{At: at(64), AuditOffset: int64(n * nSensors), Sensors: truthAt(n, 64)})
	return s.tick(64.4)
}

// sceneAcksNoneLost: the embedded broker; the producer switched to acks=0,
// the broker was killed (SIGKILL) while it published and started again;
// the audit found three records sent with acks=0 not in the topic (no
// offset: the broker never said where it stored them).
func sceneAcksNoneLost() *scene {
	s := sceneRunning()
	s.apply(board.AcksSetting{At: at(65), Acks: "0"})
	s.status(board.Producer, 65.2, status.Event{Type: status.AcksSet, Acks: "0", Count: 10, Millis: 28})
	s.apply(board.ProcExited{Name: board.Broker, PID: 4101, At: at(70), Signal: "SIGKILL"})
	s.apply(board.ProcStarted{Name: board.Broker, PID: 4120, At: at(70.5)})
	s.status(board.Broker, 70.8, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:39092"})
	for sec := 65; sec <= 78; sec++ {
		total := int64(sec-1) * nSensors
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total - 3)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage", Offsets: hwm(total - 6)})
		s.status(board.Producer, float64(sec), status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
		s.status(board.Current, float64(sec), status.Event{Type: status.Progress, Processed: total - 3, Positions: []status.Position{
			{Partition: 0, Offset: hwm(total - 3)[0], HighWatermark: hwm(total - 3)[0]},
			{Partition: 1, Offset: hwm(total - 3)[1], HighWatermark: hwm(total - 3)[1]},
			{Partition: 2, Offset: hwm(total - 3)[2], HighWatermark: hwm(total - 3)[2]},
		}})
	}
	var lost []board.LostWrite
	for i, id := range []string{"sensor-02", "sensor-06", "sensor-04"} {
		lost = append(lost, board.LostWrite{Partition: int32(1 + i/2), Offset: -1, Sensor: id, Timestamp: at(70).UnixMilli(), Acks: "0"})
	}
	s.apply(board.AckedCheck{At: at(76), Acknowledged: 760, Unconfirmed: 120, Missing: lost,
		Latest: map[int32]board.AckedRecord{1: {Partition: 1, Offset: -1, Sensor: "sensor-06", Timestamp: at(76).UnixMilli(), Acks: "0"}}})
	s.apply(embeddedPartitions(78))
	return s.tick(78.4)
}
