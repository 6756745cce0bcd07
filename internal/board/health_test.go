package board

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func health(b *Board, name string) HealthView { return b.Process(name).Health }

func TestFreezeThawState(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Connected, Endpoint: "kafka"}),
		Tick{Now: at(1)},
	)
	if v := b.Process(Usage); v.State != Running || v.Health.Word != "" || v.Health.Label != "…" {
		t.Fatalf("before any probe: %s / %+v", v.State, v.Health)
	}
	b.Apply(Request{At: at(2), Name: Usage, Op: OpFreeze})
	b.Apply(RequestDone{At: at(2), Name: Usage, Op: OpFreeze})
	b.Apply(ProcFrozen{Name: Usage, PID: 10, At: at(2), Frozen: true})
	v := b.Process(Usage)
	if v.State != Frozen || v.StateLabel != "frozen" || !v.Frozen || v.Health.Word != HealthFrozen || v.Health.Label != "frozen" {
		t.Fatalf("frozen: %s %q %+v", v.State, v.StateLabel, v.Health)
	}
	if !hasEvent(b, Usage, "freeze requested") || !hasEvent(b, Usage, "frozen (SIGSTOP") {
		t.Fatalf("timeline: %v", b.Events())
	}
	// A status line still in the pipe does not unfreeze the row.
	b.Apply(ev(Usage, 2.1, status.Event{Type: status.Progress}))
	if b.Process(Usage).State != Frozen {
		t.Fatal("a late status event thawed the row")
	}
	// A freeze of an earlier incarnation is ignored.
	b.Apply(ProcFrozen{Name: Usage, PID: 9, At: at(3), Frozen: false})
	if b.Process(Usage).State != Frozen {
		t.Fatal("another pid's thaw applied")
	}
	b.Apply(ProcFrozen{Name: Usage, PID: 10, At: at(4), Frozen: false})
	if v := b.Process(Usage); v.State != Running || v.Frozen || v.Health.Word != "" {
		t.Fatalf("thawed: %s %+v", v.State, v.Health)
	}

	// Stop while frozen: the pending stop shows, then the exit: down.
	b.Apply(ProcFrozen{Name: Usage, PID: 10, At: at(5), Frozen: true})
	b.Apply(Request{At: at(6), Name: Usage, Op: OpStop})
	if v := b.Process(Usage); v.State != Stopping || v.StateLabel != "stopping" {
		t.Fatalf("stop of a frozen process shows %s %q", v.State, v.StateLabel)
	}
	b.Apply(ProcFrozen{Name: Usage, PID: 10, At: at(6), Frozen: false})
	b.Apply(ProcExited{Name: Usage, PID: 10, At: at(6.5), Deliberate: true})
	if v := b.Process(Usage); v.State != Stopped || v.Frozen || v.Health.Word != HealthDown || v.Health.Label != "down" {
		t.Fatalf("stopped: %s %+v", v.State, v.Health)
	}
	// A new life starts thawed even if the thaw was never seen.
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(7)})
	b.Apply(ProcFrozen{Name: Usage, PID: 11, At: at(8), Frozen: true})
	b.Apply(ProcExited{Name: Usage, PID: 11, At: at(9), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Usage, PID: 12, At: at(10)})
	if v := b.Process(Usage); v.Frozen || v.State == Frozen {
		t.Fatalf("new incarnation frozen: %+v", v)
	}
	b.Apply(RequestDone{At: at(11), Name: Usage, Op: OpThaw, Err: errors.New("boom")})
	if !strings.Contains(lastEvent(b), "thaw failed: boom") {
		t.Fatalf("last event %q", lastEvent(b))
	}
}

func TestHealthFromProbes(t *testing.T) {
	b := newBoard(ProcStarted{Name: Usage, PID: 10, At: at(0)}, ProcStarted{Name: Producer, PID: 20, At: at(0)}, Tick{Now: at(1)})
	if h := health(b, Producer); h.Word != HealthOK || h.Probed || h.Label != "alive" {
		t.Fatalf("producer health %+v (liveness only)", h)
	}
	if h := health(b, Query); h.Word != HealthDown {
		t.Fatalf("query never started: %+v", h)
	}
	ok := HealthProbe{Name: Usage, PID: 10, At: at(1), Code: 200, Status: "ok", StuckAfter: 10 * time.Second}
	b.Apply(ok)
	if h := health(b, Usage); h.Word != HealthOK || h.Label != "ok" || !h.Probed {
		t.Fatalf("ok probe: %+v", h)
	}
	// The consumer says it is stuck: its own time, grown by the probe's age.
	b.Apply(HealthProbe{Name: Usage, PID: 10, At: at(2), Code: 503, Status: "stuck", StuckFor: 11 * time.Second, StuckAfter: 10 * time.Second})
	b.Apply(Tick{Now: at(3)})
	if h := health(b, Usage); h.Word != HealthStuck || h.For != 12*time.Second || h.Label != "stuck 12s" || h.Level != LevelBad {
		t.Fatalf("stuck probe: %+v", h)
	}
	if !hasEvent(b, Usage, "/healthz: stuck") {
		t.Fatalf("no stuck event: %v", b.Events())
	}
	b.Apply(HealthProbe{Name: Usage, PID: 10, At: at(4), Code: 200, Status: "ok"})
	if h := health(b, Usage); h.Word != HealthOK || !hasEvent(b, Usage, "ok again") {
		t.Fatalf("recovered: %+v", h)
	}
	// No answer: the last word holds until the stuck bound has passed
	// since the last answer, then stuck since that answer.
	b.Apply(HealthProbe{Name: Usage, PID: 10, At: at(5), Err: errors.New("timeout")})
	b.Apply(Tick{Now: at(13.9)})
	if h := health(b, Usage); h.Word != HealthOK {
		t.Fatalf("one missed probe: %+v", h)
	}
	b.Apply(HealthProbe{Name: Usage, PID: 10, At: at(14), Err: errors.New("timeout")})
	b.Apply(Tick{Now: at(14)})
	if h := health(b, Usage); h.Word != HealthStuck || h.For != 10*time.Second {
		t.Fatalf("no answer for 10 s: %+v", h)
	}
	// Probes of another incarnation are ignored.
	b.Apply(HealthProbe{Name: Usage, PID: 9, At: at(15), Code: 200, Status: "ok"})
	if h := health(b, Usage); h.Word != HealthStuck {
		t.Fatalf("old pid's probe applied: %+v", h)
	}
	// A fatal error: the process does no work any more.
	b.Apply(ev(Usage, 16, status.Event{Type: status.Error, Error: "fenced"}))
	if h := health(b, Usage); h.Word != HealthDown {
		t.Fatalf("failed process: %+v", h)
	}
	if got := shortDur(150 * time.Second); got != "2m" {
		t.Fatalf("shortDur = %q", got)
	}
	if got := shortDur(3 * time.Hour); got != "3h" {
		t.Fatalf("shortDur = %q", got)
	}
}

func TestReportHealth(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Producer, PID: 1, At: at(0)},
		ProcStarted{Name: Current, PID: 2, At: at(0)},
		ProcStarted{Name: Usage, PID: 3, At: at(0)},
		HealthProbe{Name: Usage, PID: 3, At: at(1), Code: 503, Status: "stuck", StuckFor: 10 * time.Second},
		ProcFrozen{Name: Current, PID: 2, At: at(1), Frozen: true},
		Tick{Now: at(2)},
	)
	raw, err := json.Marshal(b.Report())
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Processes []struct{ Name, State, Health string }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		Producer: {"starting", "ok"}, Current: {"frozen", "frozen"}, Usage: {"starting", "stuck"}, Query: {"stopped", "down"},
	}
	for _, p := range r.Processes {
		w := want[p.Name]
		// Query never started: its state is the board's initial one.
		if p.Name == Query {
			w[0] = p.State
		}
		if p.State != w[0] || p.Health != w[1] {
			t.Errorf("%s: state %q health %q, want %q %q", p.Name, p.State, p.Health, w[0], w[1])
		}
	}
	if !strings.Contains(string(raw), `"health":"frozen"`) {
		t.Fatalf("report %s", raw)
	}
}
