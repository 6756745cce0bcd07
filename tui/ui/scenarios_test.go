package ui

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// fakeScenarios is a ScenarioHost that records what the model asks.
type fakeScenarios struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeScenarios) Catalog() []scenario.Scenario { return scenario.Catalog() }
func (f *fakeScenarios) Start(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "start "+name)
	if name == "" {
		return fmt.Errorf("no name")
	}
	return nil
}
func (f *fakeScenarios) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "stop")
}
func (f *fakeScenarios) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func scenarioModel(s *scene, host ScenarioHost, w, h int) tea.Model {
	m, _ := New(s.b, &fakeController{}, Options{Scenarios: host}).Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// Narration states of the replay scenario, as the runner reports them.
func replayCatalog() scenario.Scenario {
	sc, _ := scenario.Lookup("replay")
	return sc
}

func progressPress() scenario.Progress {
	sc := replayCatalog()
	st := sc.Steps[2]
	return scenario.Progress{Name: sc.Name, Title: sc.Title, Step: 3, Steps: len(sc.Steps), StepTitle: st.Title,
		Say: st.Say, Watch: st.Watch, Press: st.Press, Waiting: "your turn: " + st.Press.KeyHint(),
		Checks: pending(sc)}
}

func progressWaiting() scenario.Progress {
	sc := replayCatalog()
	st := sc.Steps[3]
	checks := pending(sc)
	checks[0] = scenario.CheckResult{What: checks[0].What, Passed: true, Observed: "10/10 sensors identical (same message: timestamp, hours, km, position), rebuilt in 1.4 s"}
	return scenario.Progress{Name: sc.Name, Title: sc.Title, Step: 4, Steps: len(sc.Steps), StepTitle: st.Title,
		Say: st.Say, Watch: st.Watch, Waiting: st.Until.What, Checks: checks}
}

func progressDone(passed bool) scenario.Progress {
	sc := replayCatalog()
	obs := []string{
		"10/10 sensors identical (same message: timestamp, hours, km, position), rebuilt in 2.6 s",
		"read 1234567 messages (the topic holds 1234567) in 2.6 s; group demo-current-1a2b3c4d → demo-current-5e6f7a8b",
		"rebuilt 1,234,567 messages in 2.6 s in group demo-current-5e6f7a8b; replaying on screen for 2.3 s",
		"10/10 sensors match the audit's last message (audit read 1234567 messages)",
	}
	p := scenario.Progress{Name: sc.Name, Title: sc.Title, Step: len(sc.Steps), Steps: len(sc.Steps), Done: true, Passed: passed}
	for i, c := range sc.Checks {
		p.Checks = append(p.Checks, scenario.CheckResult{What: c.What, Passed: passed || i != 1, Observed: obs[i]})
	}
	if !passed {
		p.Err = "step 4/5 (Restart: replay from earliest): timed out after 1m30s waiting for: consumer-current caught up and its state live again"
		p.Checks[1].Observed = "not measured: the run ended before after was measured"
	}
	return p
}

func pending(sc scenario.Scenario) []scenario.CheckResult {
	var out []scenario.CheckResult
	for _, c := range sc.Checks {
		out = append(out, scenario.CheckResult{What: c.What, Pending: true, Observed: "not measured yet"})
	}
	return out
}

func TestScenarioGolden(t *testing.T) {
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{name: "picker", msgs: []tea.Msg{keyMsg("g"), keyMsg("down")}},
		{name: "narration_press", msgs: []tea.Msg{Inputs{Narration{Step: progressPress()}}}},
		{name: "narration_waiting", msgs: []tea.Msg{Inputs{Narration{Step: progressWaiting()}}}},
		{name: "narration_passed", msgs: []tea.Msg{Inputs{Narration{Step: progressDone(true)}}}},
		{name: "narration_failed", msgs: []tea.Msg{Inputs{Narration{Step: progressDone(false)}}}},
	}
	for _, tc := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				m := scenarioModel(sceneRunning(), &fakeScenarios{}, sz.w, sz.h)
				for _, msg := range tc.msgs {
					m, _ = m.Update(msg)
				}
				out := m.View()
				checkFrame(t, out, sz.w, sz.h)
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

func TestScenarioPickerStartsAndStops(t *testing.T) {
	host := &fakeScenarios{}
	m := scenarioModel(sceneRunning(), host, 120, 36)
	m = press(t, m, "g")
	if !strings.Contains(m.View(), "Guided scenarios") {
		t.Fatalf("g did not open the picker:\n%s", m.View())
	}
	// Keys in the picker choose; they do not act on processes.
	m = press(t, m, "down")
	m = press(t, m, "down")
	m = press(t, m, "x")
	m = pressEnter(m)
	if got := host.Calls(); !slices.Equal(got, []string{"start checkpoint-and-skip"}) {
		t.Fatalf("calls %q", got)
	}
	if v := m.View(); strings.Contains(v, "Guided scenarios") || !strings.Contains(v, "scenario checkpoint-and-skip started") {
		t.Fatalf("after enter:\n%s", v)
	}
	// While it runs, the picker's first entry stops it.
	m, _ = m.Update(Inputs{Narration{Step: scenario.Progress{Name: "checkpoint-and-skip", Step: 1, Steps: 6, StepTitle: "Steady state"}}})
	m = press(t, m, "g")
	if !strings.Contains(m.View(), "stop the running scenario (checkpoint-and-skip)") {
		t.Fatalf("no stop entry:\n%s", m.View())
	}
	m = pressEnter(m)
	if got := host.Calls(); !slices.Equal(got, []string{"start checkpoint-and-skip", "stop"}) {
		t.Fatalf("calls %q", got)
	}
	// Starting another while one runs: the end of the replaced one does not
	// cover the new one's panel.
	m, _ = m.Update(Inputs{Narration{Step: scenario.Progress{Name: "checkpoint-and-skip", Step: 1, Steps: 6, StepTitle: "Steady state"}}})
	m = press(t, m, "g")
	m = press(t, m, "down") // below the stop entry: replay
	m = pressEnter(m)
	m, _ = m.Update(Inputs{Narration{Step: scenario.Progress{Name: "checkpoint-and-skip", Done: true, Err: "stopped before the end"}}})
	if v := m.View(); !strings.Contains(v, "Scenario replay") || strings.Contains(v, "checkpoint-and-skip · FAILED") {
		t.Fatalf("the replaced scenario's end shows over the new one:\n%s", v)
	}
	m, _ = m.Update(Inputs{Narration{Step: progressPress()}})
	if !strings.Contains(m.View(), "step 3/5: Crash consumer-current") {
		t.Fatalf("the new scenario's progress is not shown:\n%s", m.View())
	}
	host.mu.Lock()
	host.calls = host.calls[:2]
	host.mu.Unlock()
	// esc closes the picker without starting anything.
	m = press(t, m, "g")
	m = press(t, m, "esc")
	if strings.Contains(m.View(), "Guided scenarios") || len(host.Calls()) != 2 {
		t.Fatalf("esc: calls %q\n%s", host.Calls(), m.View())
	}
}

// TestNarrationSelectsTheProcess: a step asking for x on consumer-current
// selects it once, so the presenter's x crashes the right process.
func TestNarrationSelectsTheProcess(t *testing.T) {
	ctl := &fakeController{}
	m, _ := New(sceneRunning().b, ctl, Options{Scenarios: &fakeScenarios{}}).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	m, _ = m.Update(Inputs{Narration{Step: progressPress()}})
	if got := m.(Model).Selected(); got != board.Current {
		t.Fatalf("selected %q", got)
	}
	if !strings.Contains(m.View(), "YOUR TURN: press x to crash consumer-current (SIGKILL) (selected)") {
		t.Fatalf("no key prompt:\n%s", m.View())
	}
	m = press(t, m, "x")
	if got := ctl.Calls(); !slices.Equal(got, []string{"crash consumer-current"}) {
		t.Fatalf("calls %q", got)
	}
	// The same step reported again does not take the selection back.
	m = press(t, m, "4")
	m, _ = m.Update(Inputs{Narration{Step: progressPress()}})
	if got := m.(Model).Selected(); got != board.Query {
		t.Fatalf("selection taken back to %q", got)
	}
}

func TestFinishedNarrationClosesWithEsc(t *testing.T) {
	m := scenarioModel(sceneRunning(), &fakeScenarios{}, 120, 36)
	m, _ = m.Update(Inputs{Narration{Step: progressWaiting()}})
	m = press(t, m, "esc")
	if !strings.Contains(m.View(), "Scenario replay") {
		t.Fatal("esc closed a running scenario's panel")
	}
	m, _ = m.Update(Inputs{Narration{Step: progressDone(true)}})
	if !strings.Contains(m.View(), "PASSED ✓ 4/4 checks") {
		t.Fatalf("no result:\n%s", m.View())
	}
	m = press(t, m, "esc")
	if v := m.View(); strings.Contains(v, "Scenario replay") || !strings.Contains(v, "Events") {
		t.Fatalf("esc did not give the events back:\n%s", v)
	}
}

func TestScenarioProgressIsNotABoardInput(t *testing.T) {
	m := scenarioModel(sceneRunning(), &fakeScenarios{}, 120, 36)
	before := len(m.(Model).Board().Events())
	_, cmd := m.Update(Inputs{Narration{Step: progressWaiting()}})
	if cmd != nil {
		t.Fatal("progress produced a command")
	}
	if after := len(m.(Model).Board().Events()); after != before {
		t.Fatal("progress changed the board")
	}
}

// TestUsageKeyIsTheStepsWhateverIsSelected: c acts on consumer-usage
// whatever is selected, so a step that asks for it is answered by it from
// any row, without an off-script note.
func TestUsageKeyIsTheStepsWhateverIsSelected(t *testing.T) {
	ctl := &fakeController{}
	m, _ := New(sceneRunning().b, ctl, Options{Scenarios: &fakeScenarios{}}).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	p := progressPress()
	p.Press = &scenario.Press{Action: action.CrashAt, Process: board.Usage}
	m, _ = m.Update(Inputs{Narration{Step: p}})
	m = press(t, m, "2") // consumer-current selected
	m = press(t, m, "c")
	if strings.Contains(m.View(), "is not this step's key") {
		t.Fatalf("c with another process selected was noted off-script:\n%s", m.View())
	}
	m = press(t, m, "x")
	if !strings.Contains(m.View(), "x on consumer-current is not this step") {
		t.Fatalf("x on another process not noted:\n%s", m.View())
	}
}

func pressEnter(m tea.Model) tea.Model {
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	return drain(m, cmd)
}

// TestOffScriptKeyIsNoted: a key the step did not ask for still acts, and
// the narration says so until the step's own key is pressed.
func TestOffScriptKeyIsNoted(t *testing.T) {
	ctl := &fakeController{}
	m, _ := New(sceneRunning().b, ctl, Options{Scenarios: &fakeScenarios{}}).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	m, _ = m.Update(Inputs{Narration{Step: progressPress()}}) // waits for x on consumer-current
	m = press(t, m, "p")
	if !strings.Contains(m.View(), "p is not this step's key (it still acted)") {
		t.Fatalf("no note for an off-script key:\n%s", m.View())
	}
	m = press(t, m, "4")
	m = press(t, m, "x")
	if !strings.Contains(m.View(), "x on consumer-query is not this step's key") {
		t.Fatalf("x on another process not noted:\n%s", m.View())
	}
	m = press(t, m, "2")
	m = press(t, m, "x")
	if strings.Contains(m.View(), "is not this step's key") {
		t.Fatalf("the step's own key left the note:\n%s", m.View())
	}
	if got := ctl.Calls(); !slices.Equal(got, []string{"pause", "crash consumer-query", "crash consumer-current"}) {
		t.Fatalf("calls %q", got)
	}
}
