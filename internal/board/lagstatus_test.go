package board

import (
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func TestJudgeLag(t *testing.T) {
	steady := func(lag, step int64) []lagSample {
		var w []lagSample
		for i := range int64(StatusWindow) {
			w = append(w, lagSample{lag: lag, consumed: 100 + i*step})
		}
		return w
	}
	growing := steady(10, 10)
	for i := range growing {
		growing[i].lag = 10 + int64(i)*5
	}
	settling := steady(10, 10)
	for i := range settling {
		settling[i].lag = 1 + int64(i)
	}
	tests := []struct {
		name   string
		alive  bool
		window []lagSample
		want   LagStatus
	}{
		{"gone", false, steady(10, 10), LagStop},
		{"not enough samples", true, steady(10, 10)[:StatusWindow-1], LagUnjudged},
		{"an unknown sample", true, append(steady(10, 10)[1:], lagSample{lag: -1, consumed: 300}), LagUnjudged},
		{"steady one interval behind, committing", true, steady(10, 10), LagOK},
		{"caught up once in the window", true, append(steady(10, 10)[1:], lagSample{lag: 0, consumed: 300}), LagOK},
		{"lag grows through the window while committing", true, growing, LagWarn},
		{"commits stopped, lag stays", true, steady(10, 0), LagStall},
		{"lag settling from 1 to one interval in flight", true, settling, LagOK},
	}
	for _, tc := range tests {
		if got := judgeLag(tc.alive, tc.window, 10); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestLagStatusOnTheBoard: consumer-usage one interval behind and
// committing is OK, then STALL once its commits stop, STOP once it is gone.
func TestLagStatusOnTheBoard(t *testing.T) {
	b := newBoard(ProcStarted{Name: Usage, PID: 1, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"}))
	sec := 1.0
	second := func(hwm, committed int64) {
		b.Apply(Offsets{At: at(sec), HighWatermarks: map[int32]int64{0: hwm}})
		b.Apply(Committed{At: at(sec), Group: "demo-usage", Offsets: map[int32]int64{0: committed}})
		b.Apply(Tick{Now: at(sec)})
		sec++
	}
	for i := range int64(StatusWindow) {
		second(20+i*10, 10+i*10)
	}
	if got := b.Process(Usage).LagStatus; got != LagOK {
		t.Fatalf("one interval behind and committing: %q", got)
	}
	b.Apply(ProcFrozen{Name: Usage, PID: 1, At: at(sec), Frozen: true})
	if got := b.Process(Usage).LagStatus; got != LagStall {
		t.Fatalf("frozen: %q", got)
	}
	b.Apply(ProcFrozen{Name: Usage, PID: 1, At: at(sec), Frozen: false})
	for range StatusWindow {
		second(120, 110)
	}
	if got := b.Process(Usage).LagStatus; got != LagStall {
		t.Fatalf("commits stopped with lag 10: %q", got)
	}
	b.Apply(ProcExited{Name: Usage, PID: 1, At: at(sec), Signal: "SIGKILL"})
	if got := b.Process(Usage).LagStatus; got != LagStop {
		t.Fatalf("after a crash: %q", got)
	}
	for _, rp := range b.Report().Processes {
		want := map[string]string{Usage: "STOP"}[rp.Name] // never started: unjudged
		if rp.LagStatus != want {
			t.Errorf("report: %s lag_status %q, want %q", rp.Name, rp.LagStatus, want)
		}
	}
}
