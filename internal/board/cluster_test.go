package board

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func clusterBoard() *Board {
	names := append(all(), Controller, ClusterBroker(1), ClusterBroker(2), ClusterBroker(3), Store)
	b := New(names, Config{Mongo: "mongodb://127.0.0.1:27017"})
	for i, n := range names {
		b.Apply(ProcStarted{Name: n, PID: 100 + i, At: at(0)})
	}
	return b
}

func TestClusterRowsAndBootstrap(t *testing.T) {
	b := clusterBoard()
	want := []string{Producer, Current, Usage, Query, Controller, "broker-1", "broker-2", "broker-3", Store}
	if got := b.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	b.Apply(ev(Controller, 1, status.Event{Type: status.Listening, Endpoint: "controller", Addr: "127.0.0.1:9100"}))
	b.Apply(ev("broker-2", 1, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:9102"}))
	if got := b.Config().Brokers; got != "127.0.0.1:9102" {
		t.Fatalf("Brokers = %q after broker-2 listens", got)
	}
	b.Apply(ev("broker-1", 1, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:9101"}))
	b.Apply(ev("broker-3", 1, status.Event{Type: status.Listening, Endpoint: "kafka", Addr: "127.0.0.1:9103"}))
	if got, want := b.Config().Brokers, "127.0.0.1:9101,127.0.0.1:9102,127.0.0.1:9103"; got != want {
		t.Fatalf("Brokers = %q, want %q (node order)", got, want)
	}
	for name, strategy := range map[string]string{Controller: "KRaft controller", "broker-2": "Apache Kafka node 2"} {
		v := b.Process(name)
		if v.Strategy != strategy || v.State != Running {
			t.Errorf("%s: strategy %q state %s; want %q running", name, v.Strategy, v.State, strategy)
		}
	}
	if b.Process("broker-1").Key != 0 {
		t.Error("a cluster broker has a jump key")
	}
}

// One broker of three down is a failover, not "Kafka down"; all of them is.
func TestClusterBrokerDown(t *testing.T) {
	b := clusterBoard()
	b.Apply(ProcExited{Name: "broker-2", PID: 106, At: at(2), Signal: "SIGKILL"})
	if b.brokerDown() {
		t.Fatal("one broker down of three counts as Kafka down")
	}
	if s := b.Sensors(); s.Status == Disconnected {
		t.Fatalf("sensors %s: %s with two brokers up", s.Status, s.Reason)
	}
	b.Apply(ProcExited{Name: "broker-1", PID: 105, At: at(3), Signal: "SIGKILL"})
	b.Apply(ProcExited{Name: "broker-3", PID: 107, At: at(3), Signal: "SIGKILL"})
	if !b.brokerDown() {
		t.Fatal("every broker down does not count as Kafka down")
	}
	if s := b.Sensors(); s.Status != Disconnected || !strings.Contains(s.Reason, "every broker") {
		t.Fatalf("sensors %s: %s", s.Status, s.Reason)
	}
}

func TestClusterPollFailureIsAFailover(t *testing.T) {
	b := clusterBoard()
	b.Apply(ProcExited{Name: "broker-2", PID: 106, At: at(2), Signal: "SIGKILL"})
	b.Apply(Offsets{At: at(2.2), Err: errors.New("Local: Timed out")})
	if !hasEvent(b, "", "a broker of the cluster is unreachable") {
		t.Fatalf("events: %s", lastEvent(b))
	}
}
