package ui

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// sceneClusterBrokerCrashed: --cluster 3 running, then x on broker-2.
func sceneClusterBrokerCrashed() *scene {
	names := []string{board.Producer, board.Current, board.Usage, board.Query, board.Controller,
		board.ClusterBroker(1), board.ClusterBroker(2), board.ClusterBroker(3), board.Store}
	s := &scene{b: board.New(names, board.Config{RunDir: "/tmp/krl/run-20260301-100000"})}
	s.tick(0)
	s.apply(board.ProcStarted{Name: board.Controller, PID: 4100, At: at(0)})
	s.status(board.Controller, 0.2, status.Event{Type: status.Listening, Endpoint: "controller", Addr: "127.0.0.1:39100"})
	for i := 1; i <= 3; i++ {
		n := board.ClusterBroker(i)
		s.apply(board.ProcStarted{Name: n, PID: 4100 + i, At: at(0)})
		s.status(n, 0.3, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:3909" + string(rune('0'+i))})
	}
	s.apply(board.ProcStarted{Name: board.Store, PID: 4105, At: at(0)})
	s.status(board.Store, 0.4, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:37017"})
	s.apply(board.Action{At: at(0.45), Text: "cluster of 3 brokers ready in 21.9 s (new data; all nodes listening after 18.1 s)"})
	for i, n := range []string{board.Current, board.Usage, board.Query, board.Producer} {
		s.apply(board.ProcStarted{Name: n, PID: 4110 + i, At: at(0.5)})
	}
	s.tick(1)
	// sceneRunning's minute, in short.
	s.status(board.Usage, 1.2, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"})
	s.status(board.Current, 1.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 1.6, status.Event{Type: status.CaughtUp, Processed: 0, Millis: 310})
	s.status(board.Usage, 1.7, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}})
	s.status(board.Query, 1.3, status.Event{Type: status.Listening, Endpoint: "http", Addr: "127.0.0.1:38080"})
	s.status(board.Producer, 1.5, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39091"})
	for sec := 2; sec <= 64; sec++ {
		total := int64(sec-1) * nSensors
		s.tick(float64(sec))
		s.apply(board.Offsets{At: at(float64(sec)), HighWatermarks: hwm(total)})
		s.apply(board.Committed{At: at(float64(sec)), Group: "demo-usage", Offsets: hwm(total - 3)})
		s.status(board.Producer, float64(sec), status.Event{Type: status.Progress, Produced: total, Sensors: nSensors})
		s.status(board.Current, float64(sec), status.Event{Type: status.Progress, Processed: total, Positions: []status.Position{
			{Partition: 0, Offset: hwm(total)[0], HighWatermark: hwm(total)[0]},
			{Partition: 1, Offset: hwm(total)[1], HighWatermark: hwm(total)[1]},
			{Partition: 2, Offset: hwm(total)[2], HighWatermark: hwm(total)[2]},
		}})
	}
	s.apply(board.SensorsSnapshot{At: at(64), CaughtUp: true, Sensors: sensorsAt(63, 64)})
	s.apply(board.UsageSnapshot{At: at(64), Sensors: usageAt(63, nil)})
	s.apply(board.TruthSnapshot{At: at(64), AuditOffset: int64(63 * nSensors), Sensors: truthAt(63, 64)})
	for _, name := range []string{board.Current, board.Usage} {
		s.apply(board.HealthProbe{Name: name, PID: s.b.Process(name).PID, At: at(64), Code: 200, Status: "ok", StuckAfter: 10 * time.Second})
	}
	b2 := board.ClusterBroker(2)
	s.apply(board.Request{At: at(64.5), Name: b2, Op: board.OpCrash})
	s.apply(board.ProcExited{Name: b2, PID: 4102, At: at(64.5), Signal: "SIGKILL", Deliberate: true})
	s.apply(board.RequestDone{At: at(64.5), Name: b2, Op: board.OpCrash})
	s.status(board.Producer, 64.6, status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: "127.0.0.1:39091,127.0.0.1:39092,127.0.0.1:39093", Error: "1/3 brokers are down"})
	s.status(board.Producer, 64.8, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39091,127.0.0.1:39092,127.0.0.1:39093"})
	return s.tick(66)
}
