package serve

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// clockModel shows the board's clock, how many times it was told the
// board changed and how many pings its Cmds sent back; q quits through a
// sequence (as keys typed together do), p pings twice in a batch.
type clockModel struct {
	b       *board.Board
	changes int
	pings   int
}

type pingMsg struct{}

func (m clockModel) Init() tea.Cmd { return nil }

func (m clockModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	ping := func() tea.Msg { return pingMsg{} }
	switch msg := msg.(type) {
	case ui.BoardChanged:
		m.changes++
	case pingMsg:
		m.pings++
	case tea.KeyMsg:
		switch msg.String() {
		case "q":
			return m, tea.Sequence(func() tea.Msg { return nil }, tea.Quit)
		case "p":
			return m, tea.Batch(ping, tea.Sequence(ping, func() tea.Msg { return nil }))
		}
	}
	return m, nil
}

func (m clockModel) View() string {
	s := fmt.Sprintf("%s changes=%d", m.b.Now().UTC().Format("15:04:05"), m.changes)
	if m.pings > 0 {
		s += fmt.Sprintf(" pings=%d", m.pings)
	}
	return s
}

// session runs a window as an SSH session's program does, without a
// terminal, and taps the frames the hub hands it.
type session struct {
	p      *tea.Program
	frames chan string
	ended  chan struct{}
}

func runSession(t *testing.T, w *Window) *session {
	t.Helper()
	s := &session{frames: make(chan string, 64), ended: make(chan struct{})}
	s.p = tea.NewProgram(w.Model(), tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutRenderer(),
		tea.WithoutSignalHandler())
	go w.Pump(func(m tea.Msg) {
		if f, ok := m.(frameMsg); ok {
			select {
			case s.frames <- string(f):
			default:
			}
		}
		s.p.Send(m)
	})
	go func() {
		defer close(s.ended)
		if _, err := s.p.Run(); err != nil {
			t.Errorf("session: %v", err)
		}
	}()
	t.Cleanup(func() {
		s.p.Quit()
		<-s.ended
	})
	return s
}

func nextFrame(t *testing.T, frames <-chan string, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-frames:
			if s == want {
				return
			}
		case <-deadline:
			t.Fatalf("no frame %q within 5 s", want)
		}
	}
}

func TestHubFeedsEveryViewerFromOneBoard(t *testing.T) {
	b := board.New([]string{board.Producer}, board.Config{Topic: "t"})
	inputs := make(chan board.Input)
	h := NewHub(b, inputs)
	defer h.Close()
	build := func(b *board.Board) tea.Model { return clockModel{b: b} }
	w1, ok1 := h.Attach(build)
	w2, ok2 := h.Attach(build)
	if !ok1 || !ok2 {
		t.Fatal("attach failed")
	}
	s1, s2 := runSession(t, w1), runSession(t, w2)
	at := time.Date(2026, 12, 1, 10, 0, 7, 0, time.UTC)
	inputs <- board.Tick{Now: at}
	// Each viewer is told once; the board took the input once.
	nextFrame(t, s1.frames, "10:00:07 changes=1")
	nextFrame(t, s2.frames, "10:00:07 changes=1")

	// A late viewer sees the board as it is, without a replay.
	w3, _ := h.Attach(build)
	nextFrame(t, w3.v.frames, "10:00:07 changes=0")

	// A viewer's Cmds run in its session's program, batches and sequences
	// as bubbletea runs them, and their messages come back to its model.
	s1.p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")})
	nextFrame(t, s1.frames, "10:00:07 changes=1 pings=2")

	// q in one viewer ends that viewer's session only.
	s2.p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	select {
	case <-s2.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the viewer's quit did not end its session")
	}
	select {
	case <-s1.ended:
		t.Fatal("another viewer's quit ended this one")
	default:
	}
	w2.Detach()
	inputs <- board.Tick{Now: at.Add(time.Second)}
	nextFrame(t, s1.frames, "10:00:08 changes=2 pings=2")
}

// TestHubNarratesEveryViewer: a scenario's progress, among the lab's
// inputs, reaches every viewer's dashboard; the board takes only its own
// inputs.
func TestHubNarratesEveryViewer(t *testing.T) {
	b := board.New([]string{board.Producer}, board.Config{Topic: "t"})
	inputs := make(chan board.Input)
	h := NewHub(b, inputs)
	defer h.Close()
	build := func(b *board.Board) tea.Model { return ui.New(b, readOnlyControl{}, ui.Options{}) }
	w1, _ := h.Attach(build)
	w2, _ := h.Attach(build)
	h.send(toViewer{w1.v.id, tea.WindowSizeMsg{Width: 120, Height: 36}})
	h.send(toViewer{w2.v.id, tea.WindowSizeMsg{Width: 120, Height: 36}})
	inputs <- board.Narration[scenario.Progress]{Step: scenario.Progress{Name: "replay", Title: "Scenario replay", Step: 1, Steps: 4, StepTitle: "Steady state"}}
	for _, w := range []*Window{w1, w2} {
		deadline := time.After(5 * time.Second)
		for seen := false; !seen; {
			select {
			case s := <-w.v.frames:
				seen = strings.Contains(s, "Steady state")
			case <-deadline:
				t.Fatal("the narration did not reach a viewer within 5 s")
			}
		}
	}
}

func TestLightBackground(t *testing.T) {
	for in, want := range map[string]bool{"": false, "15;0": false, "0;15": true, "0;default;7": true, "12;8": false} {
		if got := lightBackground(in); got != want {
			t.Errorf("lightBackground(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestFormatTable(t *testing.T) {
	rows := []LabRow{
		{ID: "3f2a9c01b4", Seat: SeatSSH, Fingerprint: "SHA256:abcdefghijklmnopqrstuvwxyz", Sessions: 1, State: "connected", Uptime: 95 * time.Second,
			Crashes: 2, Running: 4, Verdict: "exact", Records: 90, Group: "demo-usage-3f2a9c01b4-baseline-1", Scenario: "replay 2/5 · 1/3 checks"},
		{ID: "77aa00bb11", Seat: SeatBrowser, Fingerprint: "browser:77aa00bb11", State: "stopped", KeepLeft: 9 * time.Minute, Uptime: time.Minute,
			Verdict: "over-counted", DriftH: 1.5, Records: 12, Group: "demo-usage-77aa00bb11"},
	}
	got := FormatTable(rows, TableHead{MaxLabs: 5, Refused: 1, Keep: 10 * time.Minute})
	want := "labs 2/5 · a lab is kept 10m0s after its last session, then deleted (directory, topics, database) · 1 refused (full)\n" +
		"LAB         SEAT     KEY                   STATE               UPTIME  PROCS  CRASHES  BASELINE   USAGE DRIFT                                        SCENARIO\n" +
		"3f2a9c01b4  ssh      SHA256:abcdefghijkl…  connected           1m35s   4      2        reset #1   exact (+0.00 h / +0.00 km) over 90 records         replay 2/5 · 1/3 checks\n" +
		"77aa00bb11  browser  —                     stopped, kept 9m0s  1m0s    0      0        lab start  over-counted (+1.50 h / +0.00 km) over 12 records  —\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// countingModel counts its View calls.
type countingModel struct{ views *atomic.Int64 }

func (m countingModel) Init() tea.Cmd                       { return nil }
func (m countingModel) Update(tea.Msg) (tea.Model, tea.Cmd) { return m, nil }
func (m countingModel) View() string                        { return fmt.Sprint(m.views.Add(1)) }

// A viewer whose client left is drawn no more: the hub renders only
// attached viewers, whatever the lab goes on sending.
func TestHubStopsDrawingADetachedViewer(t *testing.T) {
	b := board.New([]string{board.Producer}, board.Config{Topic: "t"})
	inputs := make(chan board.Input)
	h := NewHub(b, inputs)
	defer h.Close()
	var views atomic.Int64
	w, ok := h.Attach(func(*board.Board) tea.Model { return countingModel{&views} })
	if !ok {
		t.Fatal("attach failed")
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	inputs <- board.Tick{Now: at}
	awaitBoardAt(t, h, at)
	if views.Load() < 2 {
		t.Fatalf("drawn %d times while attached, want at least 2", views.Load())
	}
	w.Detach()
	h.Inspect(func(*board.Board) {}) // the detach is handled
	drawn := views.Load()
	last := at
	for i := range 5 {
		last = at.Add(time.Duration(i+1) * time.Second)
		inputs <- board.Tick{Now: last}
	}
	awaitBoardAt(t, h, last)
	if n := views.Load(); n != drawn {
		t.Errorf("drawn %d more times after the viewer detached, want 0", n-drawn)
	}
}

// awaitBoardAt waits until the hub's board took the tick at now.
func awaitBoardAt(t *testing.T, h *Hub, now time.Time) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var at time.Time
		h.Inspect(func(b *board.Board) { at = b.Now() })
		if at.Equal(now) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the board is at %s, want %s", at, now)
		}
	}
}

func TestScenarioCell(t *testing.T) {
	checks := []scenario.CheckResult{{Passed: true}, {}, {}}
	for _, c := range []struct {
		p    *scenario.Progress
		want string
	}{
		{nil, ""},
		{&scenario.Progress{Name: "replay", Steps: 5}, "replay preparing"},
		{&scenario.Progress{Name: "replay", Step: 2, Steps: 5, Checks: checks}, "replay 2/5 · 1/3 checks"},
		{&scenario.Progress{Name: "replay", Step: 3, Steps: 5, Press: &scenario.Press{Action: action.Crash}}, "replay 3/5 · waits for x"},
		{&scenario.Progress{Name: "replay", Steps: 5, Done: true, Passed: true, Checks: checks[:1]}, "replay PASSED 1/1"},
		{&scenario.Progress{Name: "replay", Steps: 5, Done: true, Checks: checks}, "replay FAILED 1/3"},
		{&scenario.Progress{Name: "replay", Done: true, NotRun: true}, "replay NOT RUN"},
	} {
		if got := scenarioCell(c.p); got != c.want {
			t.Errorf("scenarioCell(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}
