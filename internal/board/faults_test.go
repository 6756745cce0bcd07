package board

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// A fatal error is never shown as running: the Error event turns the row
// to failed at once, and the exit that follows is a crash that gives the
// reason; the report carries it as last_error until the next start.
func TestFatalErrorIsVisible(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Current, PID: 5, At: at(0)},
		ev(Current, 0.1, status.Event{Type: status.Connected, Endpoint: "kafka"}),
		ev(Current, 0.2, status.Event{Type: status.CaughtUp}),
		ev(Current, 1, status.Event{Type: status.Error, Error: "kafka: Fatal error: something"}),
	)
	if st := b.Process(Current).State; st != Failed {
		t.Fatalf("state after a fatal error = %s, want failed", st)
	}
	b.Apply(ProcExited{Name: Current, PID: 5, At: at(1.2), ExitCode: 1})
	if !strings.Contains(lastEvent(b), "crashed: exited with code 1 (pid 5): kafka: Fatal error: something") {
		t.Fatalf("crash event = %q", lastEvent(b))
	}
	rp := b.Report().Processes[1]
	if rp.LastError == nil || *rp.LastError != "kafka: Fatal error: something" || rp.State != "crashed" {
		t.Fatalf("report = %+v", rp)
	}
	b.Apply(ProcStarted{Name: Current, PID: 6, At: at(2)})
	if rp := b.Report().Processes[1]; rp.LastError != nil {
		t.Fatalf("last_error after a new start = %q", *rp.LastError)
	}
}

// A fencing consumer-usage recovers by itself: retrying kafka, then
// running again at its next assignment, with the redelivered count.
func TestRecoveringAndRedelivered(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}, First: true}),
	)
	if rp := b.Report().Processes[2]; rp.Redelivered == nil || *rp.Redelivered != 0 {
		t.Fatalf("redelivered after a first assignment without = %v", rp.Redelivered)
	}
	if !hasEvent(b, Usage, "0 messages delivered again") {
		t.Fatalf("events: %+v", b.Events())
	}
	b.Apply(ev(Usage, 5, status.Event{Type: status.Recovering, Endpoint: "kafka", Error: "fenced", Reason: "re-creating the Kafka consumer"}))
	if st := b.Process(Usage).State; st != Retrying {
		t.Fatalf("state while recovering = %s", st)
	}
	b.Apply(ev(Usage, 6, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}, Redelivered: 7}))
	if st := b.Process(Usage).State; st != Running {
		t.Fatalf("state after the new assignment = %s", st)
	}
	if !hasEvent(b, Usage, "7 messages delivered again") {
		t.Fatalf("events: %+v", b.Events())
	}
	// The count reported is the start's, not a later rebalance's.
	if rp := b.Report().Processes[2]; *rp.Redelivered != 0 {
		t.Fatalf("redelivered = %d, want the start's 0", *rp.Redelivered)
	}
}

// While the broker is away the sensors panel never says LIVE, and the
// dashboard's own pollers' failures become one event, not one per poller.
func TestBrokerAway(t *testing.T) {
	b := New([]string{Producer, Current, Usage, Query, Broker, Store}, Config{})
	for _, in := range []Input{
		ProcStarted{Name: Broker, PID: 1, At: at(0)},
		ev(Broker, 0.1, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:9"}),
		ProcStarted{Name: Current, PID: 5, At: at(0.2)},
		ev(Current, 0.3, status.Event{Type: status.Connected, Endpoint: "kafka"}),
		ev(Current, 0.4, status.Event{Type: status.CaughtUp}),
		SensorsSnapshot{At: at(0.5), CaughtUp: true},
		Tick{Now: at(0.6)},
	} {
		b.Apply(in)
	}
	if s := b.Sensors().Status; s == Disconnected {
		t.Fatalf("sensors %s with the broker up", s)
	}
	b.Apply(ProcExited{Name: Broker, PID: 1, At: at(1), Signal: "SIGKILL"})
	b.Apply(SensorsSnapshot{At: at(1.1), CaughtUp: true})
	b.Apply(Tick{Now: at(1.2)})
	if s := b.Sensors(); s.Status != Disconnected || !strings.Contains(s.Reason, "broker is crashed") {
		t.Fatalf("sensors with the broker crashed: %s (%s)", s.Status, s.Reason)
	}
	before := len(b.Events())
	b.Apply(Offsets{At: at(1.3), Err: errors.New("describe topic: context deadline exceeded")})
	b.Apply(TruthSnapshot{At: at(1.4), Err: errors.New("Connection refused")})
	b.Apply(Committed{At: at(1.5), Err: errors.New("timed out")})
	got := b.Events()[before:]
	if len(got) != 1 || !strings.Contains(got[0].Text, "broker unreachable") {
		t.Fatalf("events while the broker is away: %+v", got)
	}
	// consumer-current's own word counts too (an external broker).
	b.Apply(ProcStarted{Name: Broker, PID: 2, At: at(2)})
	b.Apply(ev(Broker, 2.1, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:9"}))
	b.Apply(ev(Current, 2.2, status.Event{Type: status.Retrying, Endpoint: "kafka", Error: "1/1 brokers are down"}))
	b.Apply(SensorsSnapshot{At: at(2.3), CaughtUp: true})
	b.Apply(Tick{Now: at(2.4)})
	if s := b.Sensors().Status; s != Disconnected {
		t.Fatalf("sensors while consumer-current retries kafka: %s", s)
	}
}

func TestPlainError(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"kafka", "2/2 brokers are down"}: "broker unreachable",
		{"kafka", "0/1 brokers are down"}: "broker unreachable",
		{"kafka", "GroupCoordinator: Connect to ipv4#127.0.0.1:9 failed: Connection refused"}:      "broker unreachable (connection refused)",
		{"kafka", "2/2 brokers are down, and"}:                                                     "2/2 brokers are down, and",
		{"mongo", "server selection error: server selection timeout, current topology: …"}:         "store unreachable (connection refused)",
		{"mongo", "insert usage: connection(127.0.0.1:9[-3]) socket was unexpectedly closed: EOF"}: "store unreachable (connection lost)",
		{"mongo", "duplicate key"}: "duplicate key",
	} {
		if got := plainError(in[0], in[1]); got != want {
			t.Errorf("plainError(%q) = %q, want %q", in, got, want)
		}
	}
}

// Committed offsets at the high watermarks while consumer-usage holds no
// partition (revoked during a broker outage, not yet assigned again) are
// not caught up: the producer's buffered messages have not landed yet.
func TestNotCaughtUpWhileRevoked(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Producer, PID: 9, At: at(0)},
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0, status.Event{Type: status.Started, GroupID: "demo-usage"}),
		ev(Usage, 0.5, status.Event{Type: status.Assigned, Partitions: []int32{0, 1}, First: true}),
		Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 10, 1: 10}},
		Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: 10}},
	)
	if !b.UsageCaughtUp() {
		t.Fatal("not caught up with commits at the watermarks")
	}
	b.Apply(ev(Usage, 2, status.Event{Type: status.Revoked, Partitions: []int32{0, 1}}))
	b.Apply(Offsets{At: at(3), HighWatermarks: map[int32]int64{0: 10, 1: 10}})
	b.Apply(Committed{At: at(3), Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: 10}})
	if b.UsageCaughtUp() {
		t.Fatal("caught up while holding no partition")
	}
	b.Apply(ev(Usage, 4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1}}))
	if !b.UsageCaughtUp() {
		t.Fatal("not caught up once assigned again at the watermarks")
	}
}

// TestNewEarliestGroupSaysItStartsAtTheBeginning: a new group with reset
// earliest has no commits to resume at: it reads the topic from its start.
// A later start in a group seen before resumes at its commits.
func TestNewEarliestGroupSaysItStartsAtTheBeginning(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, Mode: "naive", Reset: "earliest", GroupID: "demo-usage-earliest-1a2b3c4d"}),
		ev(Usage, 0.2, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}, First: true, Redelivered: 1260}),
	)
	want := "starts at the beginning of the topic (a new group with reset earliest has no committed offsets): 1,260 messages delivered again"
	if !hasEvent(b, Usage, want) || hasEvent(b, Usage, "resumes at the committed offsets") {
		t.Fatalf("events: %+v", b.Events())
	}
	b.Apply(ProcExited{Name: Usage, PID: 10, At: at(1), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(2)})
	b.Apply(ev(Usage, 2.1, status.Event{Type: status.Started, Mode: "naive", Reset: "earliest", GroupID: "demo-usage-earliest-1a2b3c4d"}))
	b.Apply(ev(Usage, 2.2, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}, First: true, Redelivered: 1}))
	if !hasEvent(b, Usage, "resumes at the committed offsets, behind what was processed: 1 message delivered again") {
		t.Fatalf("events: %+v", b.Events())
	}
}
