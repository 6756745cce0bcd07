package ui

import (
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
	runningOn(s)
	b2 := board.ClusterBroker(2)
	s.apply(board.Request{At: at(64.5), Name: b2, Op: board.OpCrash})
	s.apply(board.ProcExited{Name: b2, PID: 4102, At: at(64.5), Signal: "SIGKILL", Deliberate: true})
	s.apply(board.RequestDone{At: at(64.5), Name: b2, Op: board.OpCrash})
	s.status(board.Producer, 64.6, status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: "127.0.0.1:39091,127.0.0.1:39092,127.0.0.1:39093", Error: "1/3 brokers are down"})
	s.status(board.Producer, 64.8, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "127.0.0.1:39091,127.0.0.1:39092,127.0.0.1:39093"})
	return s.tick(66)
}
