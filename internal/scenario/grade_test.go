package scenario

import (
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The grade's schedule is the seed's: the same seed, the same actions;
// another seed, another order; at least 8 SIGKILLs, the broker restarted
// only when the lab runs it.
func TestGradeSchedule(t *testing.T) {
	withBroker := Observation{Seed: 42, Procs: map[string]board.ProcView{board.Broker: {Name: board.Broker}}}
	a, _, _ := gradeSchedule(withBroker)
	b, _, _ := gradeSchedule(withBroker)
	if a != b {
		t.Fatal("one seed gave two schedules")
	}
	other, _, _ := gradeSchedule(Observation{Seed: 7, Procs: withBroker.Procs})
	if other == a {
		t.Fatal("two seeds gave one schedule")
	}
	if n := strings.Count(a, "crash "+board.Usage+"\n"); n != gradeKills {
		t.Fatalf("%d SIGKILLs in\n%s", n, a)
	}
	for _, want := range []string{"stop " + board.Usage, "freeze " + board.Usage, "wait 20s", "scale " + board.Usage + " 2", "restart " + board.Broker} {
		if !strings.Contains(a, want) {
			t.Errorf("the schedule lacks %q:\n%s", want, a)
		}
	}
	if external, _, _ := gradeSchedule(Observation{Seed: 42}); strings.Contains(external, "restart") {
		t.Errorf("a broker the lab does not run is restarted:\n%s", external)
	}
}

// The verdict: stuck when the end of a partition was never committed;
// exact only when every sensor is.
func TestGradeVerdict(t *testing.T) {
	exact := board.Drift{}
	over := board.Drift{HoursCents: 32, KmCents: 58}
	rec := &board.UsageTotals{Records: 10}
	o := Observation{HWM: map[int32]int64{0: 480, 1: 420}, Committed: map[int32]int64{1: 300}}
	if ok, said := gradeVerdict(o); ok || !strings.Contains(said, "p0 with no commit (end 480), p1@300 of 420") {
		t.Fatalf("stuck: %v %q", ok, said)
	}
	o.Committed = map[int32]int64{0: 480, 1: 420}
	o.Usage.Rows = []board.UsageRow{{SensorID: "sensor-01", Recorded: rec, Drift: &exact}}
	o.Usage.Total = board.UsageRow{Drift: &exact}
	if ok, said := gradeVerdict(o); !ok || !strings.HasPrefix(said, "exact: 1/1 sensors, 10 records") {
		t.Fatalf("exact: %v %q", ok, said)
	}
	o.Usage.Rows = append(o.Usage.Rows, board.UsageRow{SensorID: "sensor-02", Recorded: rec, Drift: &over,
		Causes: []board.Cause{{Kind: board.CauseCountedAgain, Partition: 2, Offset: 150}}})
	o.Usage.Total = board.UsageRow{Drift: &over}
	if ok, said := gradeVerdict(o); ok || !strings.Contains(said, "over-counted by +0.32 h +0.58 km in 1 message (1 counted-again): sensor-02 p2@150 counted-again") {
		t.Fatalf("over: %v %q", ok, said)
	}
}
