package board

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func TestBackpressureLabelAndDuration(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0.5, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2}}),
		ev(Usage, 5, status.Event{Type: status.Backpressure, Reason: "store unreachable: insert usage: refused", Partitions: []int32{0, 1, 2}}),
		ev(Usage, 5.2, status.Event{Type: status.Retrying, Endpoint: "mongo", Error: "refused"}),
		Tick{Now: at(17)},
	)
	v := b.Process(Usage)
	if v.StateLabel != "backpressure 12s" || v.Level != LevelWarn {
		t.Fatalf("label %q level %v, want backpressure 12s / warn", v.StateLabel, v.Level)
	}
	if v.Usage.Backpressure != 12*time.Second || !strings.Contains(v.Usage.BackpressureReason, "unreachable") {
		t.Fatalf("backpressure %s %q", v.Usage.Backpressure, v.Usage.BackpressureReason)
	}
	if !hasEvent(b, Usage, "backpressure: not taking new messages (store unreachable") {
		t.Fatalf("no backpressure event: %v", b.Events())
	}
	// A second event (the reason changed) keeps the start; Millis places
	// the start of a backpressure the board joined late.
	b.Apply(ev(Usage, 20, status.Event{Type: status.Backpressure, Reason: "store slow: ping took 1.5s, limit 1s", Millis: 15000}))
	b.Apply(Tick{Now: at(5 + 125)})
	if v := b.Process(Usage); v.StateLabel != "backpressure 2m05s" || len(v.StateLabel) > 18 {
		t.Fatalf("label %q", v.StateLabel)
	}
	b.Apply(ev(Usage, 131, status.Event{Type: status.BackpressureEnded, Millis: 126000}))
	b.Apply(ev(Usage, 131.1, status.Event{Type: status.Connected, Endpoint: "mongo"}))
	if v := b.Process(Usage); v.StateLabel != "running" || v.Usage.Backpressure != 0 {
		t.Fatalf("after the end: %q %s", v.StateLabel, v.Usage.Backpressure)
	}
	if !hasEvent(b, Usage, "backpressure ended after 126.0 s") {
		t.Fatalf("no end event: %v", b.Events())
	}
	// A crash ends it too: the next incarnation starts without it.
	b.Apply(ev(Usage, 140, status.Event{Type: status.Backpressure, Reason: "store slow: x"}))
	b.Apply(ProcExited{Name: Usage, PID: 10, At: at(141), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(142)})
	if v := b.Process(Usage); v.Usage.Backpressure != 0 || strings.Contains(v.StateLabel, "backpressure") {
		t.Fatalf("after a restart: %q %s", v.StateLabel, v.Usage.Backpressure)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 59 * time.Second: "59s", 60 * time.Second: "1m00s",
		9*time.Minute + 59*time.Second: "9m59s", 99*time.Minute + 59*time.Second: "99m", 100 * time.Minute: "99m+",
	} {
		if got := shortDuration(d); got != want || len("backpressure "+got) > 18 {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
