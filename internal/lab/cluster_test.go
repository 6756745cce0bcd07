package lab

import (
	"reflect"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

func TestClusterProcesses(t *testing.T) {
	c := Config{Cluster: 3}
	want := []string{board.Producer, board.Current, board.Usage, board.Query, "controller", "broker-1", "broker-2", "broker-3", board.Store}
	if got := c.Processes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Processes() = %v, want %v", got, want)
	}
	l := &Lab{cfg: c}
	if rf, cfg := l.replication(); rf != 3 || cfg["min.insync.replicas"] != "2" {
		t.Fatalf("replication() = %d %v", rf, cfg)
	}
	l.cfg.Cluster = 1
	if rf, cfg := l.replication(); rf != 1 || cfg["min.insync.replicas"] != "1" {
		t.Fatalf("one broker: replication() = %d %v", rf, cfg)
	}
	l.cfg.Cluster = 0
	if rf, cfg := l.replication(); rf != 1 || cfg != nil {
		t.Fatalf("embedded: replication() = %d %v", rf, cfg)
	}
}
