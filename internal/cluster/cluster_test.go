package cluster

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNames(t *testing.T) {
	if got, want := Names(3), []string{"controller", "broker-1", "broker-2", "broker-3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names(3) = %v, want %v", got, want)
	}
	for name, want := range map[string]int{"broker-1": 1, "broker-5": 5, "broker-0": 0, "broker-01": 0, "broker": 0, "broker-x": 0, "controller": 0} {
		n, ok := BrokerNumber(name)
		if n != want || ok != (want > 0) {
			t.Errorf("BrokerNumber(%q) = %d, %v; want %d", name, n, ok, want)
		}
	}
}

func TestLoadPersistsPortsAndID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cluster")
	p, reused, err := Load(dir, 3)
	if err != nil || reused {
		t.Fatalf("first Load: %v, reused %v", err, reused)
	}
	if len(p.ClusterID) != 22 || len(p.BrokerPorts) != 3 || p.ControllerPort == 0 {
		t.Fatalf("plan %+v", p)
	}
	q, reused, err := Load(dir, 3)
	if err != nil || !reused {
		t.Fatalf("second Load: %v, reused %v", err, reused)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("second Load gave %+v, want the first %+v", q, p)
	}
	if _, _, err := Load(dir, 1); err == nil || !strings.Contains(err.Error(), "--cluster 3") {
		t.Fatalf("Load with another broker count: %v, want an error naming --cluster 3", err)
	}
	if _, _, err := Load(t.TempDir(), 6); err == nil {
		t.Fatal("Load(6): no error")
	}
	r, err := ReadPlan(dir)
	if err != nil || !reflect.DeepEqual(r, p) {
		t.Fatalf("ReadPlan = %+v, %v", r, err)
	}
	if got, want := p.Bootstrap(), "127.0.0.1:"+itoa(p.BrokerPorts[0])+",127.0.0.1:"+itoa(p.BrokerPorts[1])+",127.0.0.1:"+itoa(p.BrokerPorts[2]); got != want {
		t.Fatalf("Bootstrap = %q, want %q", got, want)
	}
}

func TestLoadRejectsABrokenPlan(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), []byte(`{"cluster_id":"x","brokers":3,"controller_port":1,"broker_ports":[2,3,4]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir, 3); err == nil {
		t.Fatal("a bad cluster id was accepted")
	}
}

func itoa(n int) string { return Node{Port: n}.Addr()[len("127.0.0.1:"):] }

func props(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			m[k] = v
		}
	}
	return m
}

func TestServerProperties(t *testing.T) {
	p := Plan{ClusterID: "MkU3OEVBNTcwNTJENDM2Qk", Brokers: 3, ControllerPort: 9100, BrokerPorts: []int{9101, 9102, 9103}}
	b2, err := p.Node("broker-2")
	if err != nil {
		t.Fatal(err)
	}
	got := props(p.ServerProperties(b2, "/run/cluster/broker-2/data", Settings{}))
	want := map[string]string{
		"process.roles":                            "broker",
		"node.id":                                  "2",
		"controller.quorum.voters":                 "100@127.0.0.1:9100",
		"listeners":                                "PLAINTEXT://127.0.0.1:9102",
		"advertised.listeners":                     "PLAINTEXT://127.0.0.1:9102",
		"log.dirs":                                 "/run/cluster/broker-2/data",
		"default.replication.factor":               "3",
		"min.insync.replicas":                      "2",
		"offsets.topic.replication.factor":         "3",
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
		"group.initial.rebalance.delay.ms":         "0",
		"num.partitions":                           "3",
		"replica.lag.time.max.ms":                  "10000",
		"broker.heartbeat.interval.ms":             "1000",
		"log.retention.check.interval.ms":          "1000",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("broker-2 %s = %q, want %q", k, got[k], v)
		}
	}
	c, _ := p.Node("controller")
	got = props(p.ServerProperties(c, "/d", Settings{}))
	for k, v := range map[string]string{"process.roles": "controller", "node.id": "100", "listeners": "CONTROLLER://127.0.0.1:9100",
		"controller.quorum.voters": "100@127.0.0.1:9100", "broker.session.timeout.ms": "5000"} {
		if got[k] != v {
			t.Errorf("controller %s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["advertised.listeners"]; ok {
		t.Error("the controller advertises a client listener")
	}
	if _, ok := got["offsets.retention.minutes"]; ok {
		t.Error("offsets.retention.minutes written without --offsets-retention")
	}
	got = props(p.ServerProperties(b2, "/d", Settings{OffsetsRetention: 2 * time.Minute}))
	if got["offsets.retention.minutes"] != "2" || got["offsets.retention.check.interval.ms"] != "1000" {
		t.Errorf("--offsets-retention 2m: offsets.retention.minutes %q, check interval %q",
			got["offsets.retention.minutes"], got["offsets.retention.check.interval.ms"])
	}
	one := Plan{ClusterID: p.ClusterID, Brokers: 1, ControllerPort: 9100, BrokerPorts: []int{9101}}
	b1, _ := one.Node("broker-1")
	got = props(one.ServerProperties(b1, "/d", Settings{}))
	if got["min.insync.replicas"] != "1" || got["default.replication.factor"] != "1" || got["transaction.state.log.min.isr"] != "1" {
		t.Errorf("a single broker: %v", got)
	}
	if _, err := one.Node("broker-2"); err == nil {
		t.Error("broker-2 of a one-broker cluster")
	}
}

func TestWriteConfig(t *testing.T) {
	dir := t.TempDir()
	p := Plan{ClusterID: "MkU3OEVBNTcwNTJENDM2Qk", Brokers: 1, ControllerPort: 9100, BrokerPorts: []int{9101}}
	n, _ := p.Node("broker-1")
	nd, err := p.WriteConfig(dir, n, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(nd, "server.properties"))
	if err != nil || props(string(b))["log.dirs"] != filepath.Join(nd, "data") {
		t.Fatalf("server.properties: %v\n%s", err, b)
	}
	if Formatted(nd) {
		t.Fatal("a fresh node counts as formatted")
	}
}
