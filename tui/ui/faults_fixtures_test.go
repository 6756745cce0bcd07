package ui

import (
	"errors"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// storeDown: the store crashed on request 75 s ago; consumer-usage has not
// taken a message since (backpressure 9m59s at most fits the state column:
// here 1m15s), consumer-query answers 503.
func sceneStoreDown() *scene {
	s := sceneRunning()
	s.apply(board.Request{At: at(64.5), Name: board.Store, Op: board.OpCrash})
	s.apply(board.ProcExited{Name: board.Store, PID: 4102, At: at(64.6), Signal: "SIGKILL"})
	s.status(board.Usage, 64.7, status.Event{Type: status.Backpressure, Partitions: []int32{0, 1, 2},
		Reason: "store unreachable: insert usage: connection refused"})
	s.status(board.Usage, 64.8, status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: "127.0.0.1:37017", Error: "connection refused"})
	s.apply(board.UsageSnapshot{At: at(65), Err: errors.New(`/usage: 503 {"reason":"store_unreachable"}`)})
	return s.tick(139.7)
}

// launchFailed: the external broker never answered: every lesson process
// shows failed with the cause.
func sceneLaunchFailed() *scene {
	// An external broker (--brokers 127.0.0.1:1): no broker row.
	s := &scene{b: board.New([]string{board.Producer, board.Current, board.Usage, board.Query, board.Store},
		board.Config{RunDir: "/tmp/krl/run-20260301-100000", Brokers: "127.0.0.1:1"})}
	s.tick(0)
	s.apply(board.ProcStarted{Name: board.Store, PID: 4102, At: at(0)})
	s.status(board.Store, 0.4, status.Event{Type: status.Listening, Endpoint: "mongo", Addr: "127.0.0.1:37017"})
	s.apply(board.LaunchFailed{At: at(15.4), Cause: "Kafka down",
		Err: errors.New("Kafka at 127.0.0.1:1 did not answer within 15s (is it running? check --brokers / KAFKA_BROKER)")})
	return s.tick(16)
}
