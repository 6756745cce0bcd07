package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// fakeHost is a dashboard without processes: its board is fed the inputs a
// real run would produce for each action, so the runner's flow (prepare,
// presses, waits, marks, checks, cleanup) is tested without a stack.
type fakeHost struct {
	mu    sync.Mutex
	b     *board.Board
	at    time.Time
	pid   int
	calls []string
	notes []string
	// inert: actions are recorded but change nothing (a presenter acts).
	inert bool
}

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// newFakeHost returns a host whose board shows a steady stack: every
// process running and caught up, both panels live, every sensor exact.
func newFakeHost() *fakeHost {
	h := &fakeHost{b: board.New([]string{board.Producer, board.Current, board.Usage, board.Query}, board.Config{}), at: t0, pid: 100}
	for _, n := range []string{board.Producer, board.Current, board.Usage, board.Query} {
		h.start(n)
	}
	h.apply(
		board.ProcStatus{Name: board.Usage, At: h.at, Event: status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"}},
		board.ProcStatus{Name: board.Current, At: h.at, Event: status.Event{Type: status.CaughtUp, Processed: 30, Millis: 120}},
		board.Offsets{At: h.tick(), HighWatermarks: map[int32]int64{0: 10, 1: 10, 2: 10}},
		board.Committed{At: h.at, Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: 10, 2: 10}},
	)
	h.snapshots()
	return h
}

func (h *fakeHost) tick() time.Time {
	h.at = h.at.Add(100 * time.Millisecond)
	h.b.Apply(board.Tick{Now: h.at})
	return h.at
}

func (h *fakeHost) apply(ins ...any) {
	for _, in := range ins {
		if bi, ok := in.(board.Input); !ok || !h.b.Apply(bi) {
			panic(fmt.Sprintf("not a board input: %T", in))
		}
	}
}

func (h *fakeHost) start(name string) {
	h.pid++
	h.apply(board.ProcStarted{Name: name, PID: h.pid, At: h.tick()})
	if name == board.Current {
		h.apply(board.ProcStatus{Name: name, At: h.at, Event: status.Event{Type: status.CaughtUp, Processed: 30, Millis: 80}})
	}
	if name == board.Usage {
		mode, reset := h.b.UsageConfig()
		h.apply(board.ProcStatus{Name: name, At: h.at, Event: status.Event{Type: status.Started, Mode: mode, Reset: reset, GroupID: "demo-usage"}})
	}
}

// snapshots: consumer-current's state, consumer-query's totals and the
// audit, all agreeing.
func (h *fakeHost) snapshots() {
	at := h.tick()
	var sensors []board.SensorState
	var usage []board.UsageTotals
	var truth []board.Truth
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("sensor-%02d", i)
		s := board.SensorState{SensorID: id, Timestamp: at.UnixMilli(), HoursTot: 100, KmTot: 200}
		sensors = append(sensors, s)
		usage = append(usage, board.UsageTotals{SensorID: id, HoursCents: 150, KmCents: 300, Records: 4,
			Expect: board.ExpectReady, ExpectedHoursCents: 150, ExpectedKmCents: 300})
		last := s
		truth = append(truth, board.Truth{SensorID: id, Last: &last})
	}
	// The offsets poller samples again too (the topic has not moved).
	hwm, _ := h.b.HighWatermarks()
	committed, group, _ := h.b.Committed()
	h.apply(
		board.Offsets{At: at, HighWatermarks: hwm},
		board.Committed{At: at, Group: group, Offsets: committed},
		board.SensorsSnapshot{At: at, Sensors: sensors, CaughtUp: true},
		board.UsageSnapshot{At: at, Sensors: usage},
		board.TruthSnapshot{At: at, Sensors: truth, AuditOffset: 30},
	)
}

func (h *fakeHost) call(c string, f func()) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	if !h.inert && f != nil {
		f()
	}
	return nil
}

func (h *fakeHost) crash(name string) {
	h.apply(board.ProcExited{Name: name, PID: h.b.Process(name).PID, At: h.tick(), Signal: "SIGKILL"})
}

func (h *fakeHost) Crash(name string) error { return h.call("crash "+name, func() { h.crash(name) }) }
func (h *fakeHost) Stop(name string) error {
	return h.call("stop "+name, func() {
		h.apply(board.ProcExited{Name: name, PID: h.b.Process(name).PID, At: h.tick(), Deliberate: true})
	})
}
func (h *fakeHost) Start(name string) error { return h.call("start "+name, func() { h.start(name) }) }
func (h *fakeHost) Restart(name string) error {
	return h.call("restart "+name, func() {
		h.apply(board.ProcExited{Name: name, PID: h.b.Process(name).PID, At: h.tick(), Deliberate: true})
		h.start(name)
	})
}
func (h *fakeHost) Pause() error {
	return h.call("pause", func() {
		h.apply(board.ProcStatus{Name: board.Producer, At: h.tick(), Event: status.Event{Type: status.Paused}})
	})
}
func (h *fakeHost) Resume() error {
	return h.call("resume", func() {
		h.apply(board.ProcStatus{Name: board.Producer, At: h.tick(), Event: status.Event{Type: status.Resumed}})
	})
}
func (h *fakeHost) ArmCrash(name, point string) error {
	return h.call("arm "+name+" "+point, func() {
		h.apply(board.ProcStatus{Name: name, At: h.tick(), Event: status.Event{Type: status.CrashPoint, Point: point, Partition: 1, Offset: 7}})
		h.crash(name)
	})
}
func (h *fakeHost) SetMode(name, mode string) error {
	return h.call("mode "+name+" "+mode, func() {
		h.apply(board.Mode{UsageMode: mode})
		h.apply(board.ProcExited{Name: name, PID: h.b.Process(name).PID, At: h.tick(), Deliberate: true})
		h.start(name)
	})
}
func (h *fakeHost) SetReset(name, reset string) error {
	return h.call("reset "+name+" "+reset, func() {
		h.apply(board.Mode{UsageReset: reset})
		h.apply(board.ProcExited{Name: name, PID: h.b.Process(name).PID, At: h.tick(), Deliberate: true})
		h.start(name)
	})
}
func (h *fakeHost) WaitCaughtUp(ctx context.Context) error { return h.call("wait-caught-up", nil) }
func (h *fakeHost) Quit()                                  { _ = h.call("quit", nil) }

func (h *fakeHost) Observe(f func(*board.Board)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h.b)
}

func (h *fakeHost) ResetLab() error { h.Note("reset-lab"); return nil }

func (h *fakeHost) Freeze(name string) error { return h.call("freeze "+name, nil) }
func (h *fakeHost) Thaw(name string) error   { return h.call("thaw "+name, nil) }
func (h *fakeHost) Scale(n int) error        { return h.call(fmt.Sprintf("scale %d", n), nil) }
func (h *fakeHost) SetEffectDelay(name string, d time.Duration) error {
	return h.call("effect-delay "+name+" "+d.String(), nil)
}
func (h *fakeHost) WaitDown(ctx context.Context, n string) error {
	return h.call("wait-down "+n, nil)
}
func (h *fakeHost) WaitHeld(ctx context.Context, name string) error {
	return h.call("wait-held "+name, nil)
}
func (h *fakeHost) InjectBad(n int) (int, error) {
	return n, h.call(fmt.Sprintf("inject-bad %d", n), nil)
}
func (h *fakeHost) History(ctx context.Context, d time.Duration) error {
	return h.call("history "+d.String(), nil)
}
func (h *fakeHost) GrowHistory(ctx context.Context, n int64) error {
	return h.call(fmt.Sprintf("history %d", n), nil)
}
func (h *fakeHost) SetRebuild(strategy string) error {
	return h.call("rebuild "+strategy, nil)
}

func (h *fakeHost) Note(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, text)
}

func (h *fakeHost) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func (h *fakeHost) Notes() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.notes, "\n")
}

var alive = func(name string) *Cond {
	return &Cond{What: name + " running", Holds: func(o Observation) bool { return o.Proc(name).Alive }}
}

// crashAndBack: crash consumer-current, restart it, and check both marks.
func crashAndBack() Scenario {
	return Scenario{
		Name: "test", Title: "crash and back",
		Steps: []Step{
			{Title: "crash", Say: "crash it", Press: &Press{Action: action.Crash, Process: board.Current}, Mark: "dead"},
			{Title: "back", Say: "restart it", Press: &Press{Action: action.Restart, Process: board.Current}, Until: alive(board.Current), Mark: "back"},
		},
		Checks: []Check{{
			What:  "crashed once and started again",
			Needs: []string{"dead", "back"},
			Eval: func(m Marks) (bool, string) {
				d, b := m["dead"].Proc(board.Current), m["back"].Proc(board.Current)
				return !d.Alive && d.Crashes == 1 && b.Alive && b.Starts == 2,
					fmt.Sprintf("crashes %d, starts %d", b.Crashes, b.Starts)
			},
		}},
	}
}

func TestRunnerHeadlessPerformsTheKeys(t *testing.T) {
	h := newFakeHost()
	var progress []Progress
	r := Runner{Host: h, Poll: 5 * time.Millisecond, OnProgress: func(p Progress) { progress = append(progress, p) }}
	res := r.Run(context.Background(), crashAndBack())
	if !res.Passed || res.Error != "" || len(res.Checks) != 1 || res.Checks[0].Observed != "crashes 1, starts 2" {
		t.Fatalf("result %+v", res)
	}
	if got, want := h.Calls(), []string{"crash consumer-current", "start consumer-current"}; !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	for _, want := range []string{"scenario test · step 1/2: crash", "check ✓ crashed once and started again: crashes 1, starts 2", "scenario test PASSED: 1/1 checks"} {
		if !strings.Contains(h.Notes(), want) {
			t.Errorf("timeline lacks %q:\n%s", want, h.Notes())
		}
	}
	last := progress[len(progress)-1]
	if !last.Done || !last.Passed || len(last.Checks) != 1 || last.Checks[0].Pending {
		t.Fatalf("last progress %+v", last)
	}
	steps := map[int]bool{}
	for _, p := range progress {
		steps[p.Step] = true
	}
	if !steps[0] || !steps[1] || !steps[2] {
		t.Fatalf("progress did not go through preparing and both steps: %v", steps)
	}
}

func TestRunnerTimeoutLeavesChecksUnmeasured(t *testing.T) {
	h := newFakeHost()
	sc := crashAndBack()
	sc.Steps[1].Until = &Cond{What: "something that never happens", Holds: func(Observation) bool { return false }}
	sc.Steps[1].Timeout = 50 * time.Millisecond
	sc.Cleanup = "resume producer"
	res := Runner{Host: h, Poll: 5 * time.Millisecond}.Run(context.Background(), sc)
	if res.Passed {
		t.Fatal("passed without its marks")
	}
	if !strings.Contains(res.Error, "step 2/2 (back): timed out after 50ms waiting for: something that never happens") {
		t.Fatalf("error %q", res.Error)
	}
	if c := res.Checks[0]; c.Passed || c.Observed != `not measured: the run stopped before its mark "back" was taken` {
		t.Fatalf("check %+v", c)
	}
	if calls := h.Calls(); calls[len(calls)-1] != "resume" {
		t.Fatalf("cleanup not run after the failure: %q", calls)
	}
}

func TestRunnerCancelled(t *testing.T) {
	h := newFakeHost()
	h.inert = true // nobody acts: the run waits for the first crash forever
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		done <- Runner{Host: h, Poll: 5 * time.Millisecond, Interactive: true}.Run(ctx, crashAndBack())
	}()
	cancel()
	select {
	case res := <-done:
		if res.Passed || !strings.Contains(res.Error, "stopped before the end") {
			t.Fatalf("result %+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not end when cancelled")
	}
}

// TestRunnerInteractiveWaitsForThePresenter: with a presenter the runner
// performs nothing itself; the key's effect on the board ends the step.
func TestRunnerInteractiveWaitsForThePresenter(t *testing.T) {
	h := newFakeHost()
	h.inert = true
	var mu sync.Mutex
	asked := map[string]bool{}
	presenter := func(p Progress) {
		if p.Press == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		key := fmt.Sprintf("%d %s", p.Step, p.Press.Action)
		if asked[key] {
			return
		}
		asked[key] = true
		if p.Waiting != "your turn: "+p.Press.KeyHint() {
			t.Errorf("waiting %q", p.Waiting)
		}
		// The presenter presses the key: the dashboard acts.
		go h.Observe(func(*board.Board) {
			if p.Press.Action == action.Crash {
				h.crash(p.Press.Process)
			} else {
				h.start(p.Press.Process)
			}
		})
	}
	res := Runner{Host: h, Poll: 5 * time.Millisecond, Interactive: true, OnProgress: presenter}.Run(context.Background(), crashAndBack())
	if !res.Passed {
		t.Fatalf("result %+v", res)
	}
	if calls := h.Calls(); len(calls) != 0 {
		t.Fatalf("the runner acted itself: %q", calls)
	}
	if len(asked) != 2 {
		t.Fatalf("asked for %v", asked)
	}
}

// TestRunnerPrepares: a run starts from the stack the scenario needs:
// what ended is started, a paused producer resumed, consumer-usage
// switched (reset before mode).
func TestRunnerPrepares(t *testing.T) {
	h := newFakeHost()
	h.apply(board.ProcStatus{Name: board.Producer, At: h.tick(), Event: status.Event{Type: status.Paused}})
	h.crash(board.Query)
	h.apply(board.Mode{UsageReset: "earliest"})
	sc := Scenario{Name: "prep", UsageMode: "guarded", UsageReset: "latest",
		Steps:  []Step{{Title: "look", Say: "look", Mark: "m"}},
		Checks: []Check{{What: "true", Needs: []string{"m"}, Eval: func(Marks) (bool, string) { return true, "ok" }}}}
	// The board answers again after the restarts: fresh snapshots.
	go func() {
		for i := 0; i < 100; i++ {
			time.Sleep(10 * time.Millisecond)
			h.Observe(func(*board.Board) { h.snapshots() })
		}
	}()
	res := Runner{Host: h, Poll: 5 * time.Millisecond}.Run(context.Background(), sc)
	want := []string{"start consumer-query", "resume", "reset consumer-usage latest", "mode consumer-usage guarded"}
	if got := h.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if !res.Passed {
		t.Fatalf("result %+v", res)
	}
}

func TestPressDone(t *testing.T) {
	h := newFakeHost()
	var base Observation
	h.Observe(func(b *board.Board) { base = Capture(b) })
	now := func() (o Observation) {
		h.Observe(func(b *board.Board) { o = Capture(b) })
		return o
	}
	x := Press{Action: action.Crash, Process: board.Usage}
	if pressDone(x, base, now()) {
		t.Fatal("x done before any crash")
	}
	h.Stop(board.Usage)
	if pressDone(x, base, now()) {
		t.Fatal("a graceful stop counted as the crash")
	}
	h.Start(board.Usage)
	h.Crash(board.Usage)
	if !pressDone(x, base, now()) {
		t.Fatal("crash not seen")
	}
	c := Press{Action: action.CrashAt, Process: board.Usage}
	h.Start(board.Usage)
	base = now()
	h.ArmCrash(board.Usage, "after-delta")
	if !pressDone(c, base, now()) {
		t.Fatal("crash point not seen")
	}
	m := Press{Action: action.Mode, Process: board.Usage, Value: "guarded"}
	h.Start(board.Usage)
	base = now()
	h.SetMode(board.Usage, "guarded")
	if !pressDone(m, base, now()) {
		t.Fatal("mode switch not seen")
	}
	if pressDone(Press{Action: action.Reset, Process: board.Usage, Value: "earliest"}, base, now()) {
		t.Fatal("a mode switch counted as a reset switch")
	}
}

func (h *fakeHost) WaitISR(ctx context.Context, n int) error                 { return nil }
func (h *fakeHost) WaitBlocked(ctx context.Context, name string) error       { return nil }
func (h *fakeHost) WaitLeads(ctx context.Context, name string) error         { return nil }
func (h *fakeHost) WaitBalanced(ctx context.Context) error                   { return nil }
func (h *fakeHost) WaitDeleted(ctx context.Context) error                    { return nil }
func (h *fakeHost) WaitLastDeleted(ctx context.Context, sensor string) error { return nil }
func (h *fakeHost) SetAcks(acks string) error {
	return h.call("acks "+acks, func() { h.apply(board.AcksSetting{Acks: acks}) })
}

// TestRunnerRefusesAReplayTheTopicIsTooLongFor: a scenario that replays
// consumer-usage from earliest says at its start that the topic is too
// long for it, instead of timing out minutes in.
func TestRunnerRefusesAReplayTheTopicIsTooLongFor(t *testing.T) {
	sc := crashAndBack()
	sc.MaxReplay = 29 // the fake topic holds 30
	res := Runner{Host: newFakeHost(), Poll: 5 * time.Millisecond}.Run(context.Background(), sc)
	if res.Passed || !strings.Contains(res.Error, "the topic holds 30 messages") || !strings.Contains(res.Error, "at most 29") {
		t.Fatalf("result %+v", res)
	}
	sc.MaxReplay = 30
	if res := (Runner{Host: newFakeHost(), Poll: 5 * time.Millisecond}.Run(context.Background(), sc)); strings.Contains(res.Error, "the topic holds") {
		t.Fatalf("refused a topic within the bound: %+v", res)
	}
}

// TestRunnerRefusesBeforeChangingAnything: a scenario whose replay the
// topic is too long for says so and stops before any action (no reset-lab,
// no mode switch), its checks not run, the reason said once.
func TestRunnerRefusesBeforeChangingAnything(t *testing.T) {
	h := newFakeHost()
	sc := crashAndBack()
	sc.Baseline, sc.UsageMode, sc.MaxReplay = true, "guarded", 20 // the topic holds 30
	res := Runner{Host: h, Poll: 5 * time.Millisecond}.Run(context.Background(), sc)
	if res.Passed || !res.NotRun || !strings.Contains(res.Error, "the topic holds 30 messages") || !strings.Contains(res.Error, "Nothing was changed") {
		t.Fatalf("result %+v", res)
	}
	if calls := h.Calls(); len(calls) != 0 {
		t.Fatalf("a refused scenario acted: %q", calls)
	}
	for _, c := range res.Checks {
		if c.Passed || c.Observed != "not run: the scenario could not start here (its error says why)" {
			t.Fatalf("check %+v", c)
		}
	}
	var said []string
	for _, n := range strings.Split(h.Notes(), "\n") {
		if strings.Contains(n, "the topic holds 30 messages") {
			said = append(said, n)
		}
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "scenario test cannot run here: ") {
		t.Fatalf("the reason is said %d times: %q", len(said), h.Notes())
	}
}
