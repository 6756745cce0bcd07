package ui

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

func TestMain(m *testing.M) {
	// Plain text goldens: no colour codes, so they are stable and readable,
	// and they prove the views say everything in words too.
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(m.Run())
}

var sizes = []struct{ w, h int }{{120, 36}, {80, 24}, {60, 15}, {200, 50}}

// render builds a model over the scene's board, applies msgs and returns
// its view at w×h.
func render(t *testing.T, s *scene, w, h int, msgs ...tea.Msg) string {
	t.Helper()
	m := tea.Model(New(s.b, &fakeController{}, Options{}))
	m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m.View()
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		scene func() *scene
		msgs  []tea.Msg
	}{
		{name: "startup", scene: sceneStartup},
		{name: "running", scene: sceneRunning, msgs: []tea.Msg{keyMsg("3")}},
		{name: "first_seconds", scene: sceneFirstSeconds, msgs: []tea.Msg{keyMsg("3")}},
		{name: "partitions_failover", scene: sceneFailover, msgs: []tea.Msg{keyMsg("1")}},
		{name: "partitions_view_failover", scene: sceneFailover, msgs: []tea.Msg{keyMsg("1"), keyMsg("t")}},
		{name: "partitions_view_embedded", scene: sceneRunning, msgs: []tea.Msg{keyMsg("t")}},
		{name: "retention", scene: sceneRetention, msgs: []tea.Msg{keyMsg("1")}},
		{name: "partitions_view_retention", scene: sceneRetention, msgs: []tea.Msg{keyMsg("t")}},
		{name: "retention_forgotten", scene: sceneForgotten, msgs: []tea.Msg{keyMsg("2")}},
		{name: "acks_lost", scene: sceneAcksLost, msgs: []tea.Msg{keyMsg("1"), keyMsg("t")}},
		{name: "acks_none_lost", scene: sceneAcksNoneLost, msgs: []tea.Msg{keyMsg("1"), keyMsg("t")}},
		{name: "usage_crashed", scene: sceneUsageCrashed, msgs: []tea.Msg{keyMsg("3"), ActionResultMsg{Op: board.OpCrash, Name: board.Usage}}},
		{name: "current_replaying", scene: sceneReplaying, msgs: []tea.Msg{keyMsg("2")}},
		{name: "usage_drift", scene: sceneDrift, msgs: []tea.Msg{keyMsg("3"), ActionResultMsg{Op: action.Reset, Name: board.Usage, Value: "earliest", Restarted: true}}},
		{name: "current_and_query_down", scene: sceneDown, msgs: []tea.Msg{keyMsg("4"), ActionResultMsg{Op: board.OpCrash, Name: board.Query}}},
		{name: "full_help", scene: sceneRunning, msgs: []tea.Msg{keyMsg("?")}},
		{name: "frozen_and_stuck", scene: sceneFrozenStuck, msgs: []tea.Msg{keyMsg("3"), ActionResultMsg{Op: action.Freeze, Name: board.Usage, Value: "frozen"}}},
		{name: "poison", scene: scenePoison, msgs: []tea.Msg{keyMsg("3"), ActionResultMsg{Op: action.InjectBad, Name: board.Producer, Value: "9"}}},
		{name: "store_down_backpressure", scene: sceneStoreDown, msgs: []tea.Msg{keyMsg("3")}},
		{name: "launch_failed", scene: sceneLaunchFailed},
		{name: "scaled", scene: sceneScaled, msgs: []tea.Msg{keyMsg("3"), keyMsg("down"), ActionResultMsg{Op: action.Scale, Name: board.Usage, Value: "3"}}},
		{name: "cluster_broker_crashed", scene: sceneClusterBrokerCrashed, msgs: []tea.Msg{keyMsg("down"), keyMsg("down"), keyMsg("down"), keyMsg("down"), keyMsg("down"), keyMsg("down"), ActionResultMsg{Op: board.OpCrash, Name: "broker-2"}}},
		{name: "current_snapshot_rebuilt", scene: sceneSnapshotRebuilt, msgs: []tea.Msg{keyMsg("2")}},
		{name: "rebuild_cost_chart", scene: sceneCost, msgs: costMsgs},
		{name: "largest_values_states_a", scene: sceneStatesA, msgs: []tea.Msg{keyMsg("3")}},
		{name: "largest_values_states_b", scene: sceneStatesB, msgs: []tea.Msg{keyMsg("2")}},
		{name: "logs", scene: sceneUsageCrashed, msgs: []tea.Msg{keyMsg("3"), keyMsg("l"), LogTailMsg{Name: board.Usage, Lines: []string{
			`time=10:00:01.200 level=INFO msg="consumer-usage starting" mode=naive reset=latest group=demo-usage`,
			`time=10:00:01.700 level=INFO msg=assigned partitions="[0 1 2]"`,
			`time=10:01:04.500 level=INFO msg="checkpoint saved" sensor=sensor-03 offset=211`,
		}}}},
	}
	for _, tc := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				out := render(t, tc.scene(), sz.w, sz.h, tc.msgs...)
				checkFrame(t, out, sz.w, sz.h)
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// checkFrame: the view fills the terminal exactly, no line wider than it.
func checkFrame(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw != w {
			t.Errorf("line %d is %d wide, want %d: %q", i+1, lw, w, l)
		}
	}
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// press sends a key and runs the commands it returns (as bubbletea would,
// off Update) feeding their messages back, until none are left.
func press(t *testing.T, m tea.Model, k string) tea.Model {
	t.Helper()
	m, cmd := m.Update(keyMsg(k))
	return drain(m, cmd)
}

func drain(m tea.Model, cmd tea.Cmd) tea.Model {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		if batch, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, batch...)
			continue
		}
		m = feedInputs(m)
		if _, ok := msg.(tea.QuitMsg); ok {
			continue
		}
		var next tea.Cmd
		m, next = m.Update(msg)
		queue = append(queue, next)
	}
	return m
}

// feedInputs hands the model what its fake controller emitted, as the
// dashboard forwards the lab's Inputs to the program.
func feedInputs(m tea.Model) tea.Model {
	if f, ok := m.(Model).ctl.(*fakeController); ok {
		for _, in := range f.takeInputs() {
			m, _ = m.Update(Inputs{in})
		}
	}
	return m
}

func newModel(s *scene, ctl Controller) tea.Model {
	m, _ := New(s.b, ctl, Options{ArmAfter: time.Millisecond}).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	return m
}

func TestKeysCallTheController(t *testing.T) {
	tests := []struct {
		name  string
		keys  []string
		calls []string
	}{
		{name: "x crashes the selected process", keys: []string{"3", "x"}, calls: []string{"crash consumer-usage"}},
		{name: "arrows then x", keys: []string{"down", "down", "x"}, calls: []string{"crash consumer-usage"}},
		{name: "tab wraps", keys: []string{"6", "tab", "x"}, calls: []string{"crash producer"}},
		{name: "up wraps", keys: []string{"1", "up", "s"}, calls: []string{"stop store"}},
		{name: "s stops", keys: []string{"4", "s"}, calls: []string{"stop consumer-query"}},
		{name: "r restarts a running process", keys: []string{"2", "r"}, calls: []string{"restart consumer-current"}},
		{name: "p pauses the producer whatever is selected", keys: []string{"5", "p"}, calls: []string{"pause"}},
		{name: "m toggles usage mode", keys: []string{"m"}, calls: []string{"mode guarded"}},
		{name: "e toggles usage reset", keys: []string{"e"}, calls: []string{"reset earliest"}},
		{name: "c cycles crash points through none", keys: []string{"c", "c", "c", "c"}, calls: []string{
			"arm consumer-usage after-delta", "arm consumer-usage after-checkpoint", "arm consumer-usage none",
			"arm consumer-usage after-delta"}},
		{name: "R resets the lab", keys: []string{"R"}, calls: []string{"reset-lab"}},
		{name: "b injects one bad record of every kind", keys: []string{"4", "b"}, calls: []string{"inject-bad 0"}},
		{name: "l tails the selected process", keys: []string{"3", "l"}, calls: []string{"tail consumer-usage"}},
		{name: "l follows the selection", keys: []string{"3", "l", "down"}, calls: []string{"tail consumer-usage", "tail consumer-query"}},
		{name: "help and quit call nothing", keys: []string{"?", "g", "q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctl := &fakeController{}
			m := newModel(sceneRunning(), ctl)
			for _, k := range tc.keys {
				m = press(t, m, k)
			}
			if got := ctl.Calls(); !slices.Equal(got, tc.calls) {
				t.Fatalf("calls %q, want %q", got, tc.calls)
			}
		})
	}
}

func TestCrashIsVisibleBeforeTheExit(t *testing.T) {
	ctl := &fakeController{}
	s := sceneRunning()
	m := newModel(s, ctl)
	m = press(t, m, "3")
	// Update alone, without running the command: the screen must already react.
	m, cmd := m.Update(keyMsg("x"))
	if cmd == nil {
		t.Fatal("x returned no command")
	}
	if len(ctl.Calls()) != 0 {
		t.Fatal("Update called the controller itself")
	}
	if !strings.Contains(m.View(), "SIGKILL to pid 4111") {
		t.Fatalf("the status line does not say what x does:\n%s", m.View())
	}
	// The lab shows its request on the board before it acts.
	ctl.emit(board.Request{At: at(70), Name: board.Usage, Op: board.OpCrash})
	if v := feedInputs(m).View(); !strings.Contains(v, "crashing…") {
		t.Fatalf("view does not show crashing…:\n%s", v)
	}
	m = drain(m, cmd)
	if got := ctl.Calls(); !slices.Equal(got, []string{"crash consumer-usage"}) {
		t.Fatalf("calls %q", got)
	}
	if !strings.Contains(m.View(), "consumer-usage was SIGKILLed: it stays down until r restarts it") {
		t.Fatal("no confirmation in the status line")
	}
	// The supervisor reports the exit: crashed, with the signal in words.
	m, _ = m.Update(Inputs{board.ProcExited{Name: board.Usage, PID: 4111, At: at(65), Signal: "SIGKILL"}})
	if v := m.View(); !strings.Contains(v, "crashed (SIGKILL)") {
		t.Fatalf("view after exit:\n%s", v)
	}
}

func TestFailedActionRevertsAndSaysWhy(t *testing.T) {
	ctl := &fakeController{fail: map[string]error{"crash": errNoSuchProcess}}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "3")
	m = press(t, m, "x")
	v := m.View()
	if strings.Contains(v, "crashing…") {
		t.Fatal("still crashing after the controller failed")
	}
	if !strings.Contains(v, "crash consumer-usage failed: no such process") {
		t.Fatalf("no error in the status line:\n%s", v)
	}
	if p := m.(Model).Board().Process(board.Usage); p.State != board.Running {
		t.Fatalf("state %s", p.State)
	}
}

func TestNotRunningIsNotCalled(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneUsageCrashed(), ctl)
	m = press(t, m, "3")
	m = press(t, m, "x")
	m = press(t, m, "s")
	if len(ctl.Calls()) != 0 {
		t.Fatalf("calls on a dead process: %q", ctl.Calls())
	}
	if !strings.Contains(m.View(), "consumer-usage is not running") {
		t.Fatal("no explanation")
	}
	press(t, m, "r")
	if got := ctl.Calls(); !slices.Equal(got, []string{"start consumer-usage"}) {
		t.Fatalf("r on a crashed process: %q", got)
	}
}

// TestModeSwitchOnlyThroughTheController: m asks the controller; the
// board changes only by the inputs the controller emits, as every board
// fed from the lab's Inputs does.
func TestModeSwitchOnlyThroughTheController(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	before := len(m.(Model).Board().Events())
	m, cmd := m.Update(keyMsg("m"))
	if mode, _ := m.(Model).Board().UsageConfig(); mode != "naive" || len(m.(Model).Board().Events()) != before {
		t.Fatalf("Update changed the board itself: mode %q, events %d → %d", mode, before, len(m.(Model).Board().Events()))
	}
	m = drain(m, cmd)
	if mode, _ := m.(Model).Board().UsageConfig(); mode != "guarded" {
		t.Fatalf("mode %q", mode)
	}
	press(t, m, "m")
	if got := ctl.Calls(); !slices.Equal(got, []string{"mode guarded", "mode naive"}) {
		t.Fatalf("calls %q", got)
	}
}

func TestJumpToMissingProcess(t *testing.T) {
	s := newScene()
	s.b = board.New([]string{board.Producer, board.Current, board.Usage, board.Query}, board.Config{})
	ctl := &fakeController{}
	m := newModel(s, ctl)
	m = press(t, m, "5")
	if sel := m.(Model).Selected(); sel != board.Producer {
		t.Fatalf("selected %q", sel)
	}
	if !strings.Contains(m.View(), "broker is not supervised here") {
		t.Fatal("no explanation for 5 without an embedded broker")
	}
}

func TestLogsOverlay(t *testing.T) {
	ctl := &fakeController{tail: []string{"level=INFO msg=hello", "level=ERROR msg=\"boom\"\tpartition=2"}}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "3")
	m = press(t, m, "l")
	v := m.View()
	if !strings.Contains(v, "Logs · consumer-usage") || !strings.Contains(v, `level=ERROR msg="boom"    partition=2`) {
		t.Fatalf("overlay:\n%s", v)
	}
	m = press(t, m, "esc")
	if strings.Contains(m.View(), "Logs · consumer-usage") {
		t.Fatal("esc did not close the overlay")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := newModel(sceneRunning(), &fakeController{})
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not quit", k)
		}
	}
}

func TestFullHelpFits(t *testing.T) {
	for _, sz := range sizes[:2] {
		m := newModel(sceneRunning(), &fakeController{})
		m, _ = m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
		m = press(t, m, "?")
		out := m.View()
		checkFrame(t, out, sz.w, sz.h)
		if !strings.Contains(out, "crash (SIGKILL)") || !strings.Contains(out, "usage naive/guarded") {
			t.Fatalf("%dx%d full help:\n%s", sz.w, sz.h, out)
		}
	}
}

// TestBoardIsHandedBack: the caller reads the board from the model the
// program returns.
func TestBoardIsHandedBack(t *testing.T) {
	s := sceneRunning()
	m := newModel(s, &fakeController{})
	if b := m.(Model).Board(); b != s.b || !b.CaughtUp() {
		t.Fatal("the model does not hand back its board as it is (running scene, caught up)")
	}
}

// TestOnlyInputsAndOwnMessagesCount: a board input sent on its own, not
// in Inputs, is ignored, as is any message that is not the model's.
func TestOnlyInputsAndOwnMessagesCount(t *testing.T) {
	m := newModel(sceneStartup(), &fakeController{})
	before := m.View()
	m, cmd := m.Update(board.Action{At: at(2), Text: "script: crash consumer-usage"})
	if cmd != nil || m.View() != before {
		t.Fatal("a bare board input reached the board")
	}
	type stranger struct{}
	if m, cmd = m.Update(stranger{}); cmd != nil || m.View() != before {
		t.Fatal("a stranger's message changed the model")
	}
}

func TestBoardInputsPassThrough(t *testing.T) {
	m := newModel(sceneStartup(), &fakeController{})
	m, cmd := m.Update(Inputs{board.Action{At: at(2), Text: "script: crash consumer-usage"}})
	if cmd != nil {
		t.Fatal("a board input produced a command")
	}
	if !strings.Contains(m.View(), "script: crash consumer-usage") {
		t.Fatal("action not in the timeline")
	}
}

// TestColourFrames renders with colours on: styles must not change the
// frame (every line exactly the terminal width) and colour must be there.
func TestColourFrames(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, sc := range []func() *scene{sceneRunning, sceneUsageCrashed, sceneReplaying, sceneDrift} {
		for _, sz := range sizes[:2] {
			out := render(t, sc(), sz.w, sz.h, keyMsg("3"))
			checkFrame(t, out, sz.w, sz.h)
			if !strings.Contains(out, "\x1b[") {
				t.Fatal("no colour codes with a colour profile")
			}
		}
	}
}

func TestRunesTypedTogetherActInTurn(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3x")})
	if got := m.(Model).Selected(); got != board.Usage {
		t.Fatalf("selected %q after \"3x\", want %q", got, board.Usage)
	}
	drain(m, cmd)
	if got := ctl.Calls(); !slices.Equal(got, []string{"crash consumer-usage"}) {
		t.Fatalf("calls %q, want one crash of consumer-usage", got)
	}
}

// TestStatusNamesTheLatestOfTwoCrashPoints: after a second crash point
// fired, the status line names its offset, never the first one's, even when
// the controller's answer to the second arm comes before the board hears
// the process announce it.
func TestStatusNamesTheLatestOfTwoCrashPoints(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	crash := func(m tea.Model, sec float64, offset int64) tea.Model {
		m, _ = m.Update(Inputs{
			board.ProcStatus{Name: board.Usage, At: at(sec), Event: status.Event{Type: status.CrashPoint,
				Point: "after-delta", Partition: 1, Offset: offset}},
			board.ProcExited{Name: board.Usage, PID: 1003, At: at(sec), Signal: "SIGKILL"},
		})
		return m
	}
	statusLine := func(m tea.Model) string {
		lines := strings.Split(m.View(), "\n")
		return lines[len(lines)-2]
	}

	m = press(t, m, "c")
	m = crash(m, 71, 79)
	if got := statusLine(m); !strings.Contains(got, "crash point after-delta fired at partition 1 offset 79") {
		t.Fatalf("status line after the first crash point fired: %q", got)
	}
	m, _ = m.Update(Inputs{
		board.ProcStarted{Name: board.Usage, PID: 1004, At: at(72)},
		board.ProcStatus{Name: board.Usage, At: at(72.5), Event: status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"}},
	})

	// The second arm: c moves on from the board (nothing armed since the
	// crash) to after-delta again, armed once c rests; the lab's answer is
	// taken before the announcement it emitted.
	ctl.armed = lesson.NoCrashPoint
	m, cmd := m.Update(keyMsg("c"))
	m, cmd = m.Update(cmd()) // c rested
	m, _ = m.Update(cmd())
	if got := statusLine(m); !strings.Contains(got, "crash point after-delta armed") {
		t.Fatalf("status line after the second arm was answered: %q", got)
	}
	m = feedInputs(m)
	if got := statusLine(m); !strings.Contains(got, "crash point after-delta armed") {
		t.Fatalf("status line once the board heard the second arm: %q", got)
	}
	m = crash(m, 75, 1369)
	if got := statusLine(m); !strings.Contains(got, "crash point after-delta fired at partition 1 offset 1369") {
		t.Fatalf("status line after the second crash point fired: %q", got)
	}
}

// TestArmedStatusFollowsTheBoard: the status line stops saying "armed" once
// the point fired.
func TestArmedStatusFollowsTheBoard(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "c")
	if !strings.Contains(m.View(), "crash point after-delta armed") {
		t.Fatalf("no armed status:\n%s", m.View())
	}
	m, _ = m.Update(Inputs{board.ProcStatus{Name: board.Usage, At: at(71), Event: status.Event{Type: status.CrashPoint,
		Point: "after-delta", Partition: 2, Offset: 320}}})
	lines := strings.Split(m.View(), "\n")
	statusLine := lines[len(lines)-2]
	if strings.Contains(statusLine, "armed") || !strings.Contains(statusLine, "crash point after-delta fired at partition 2 offset 320") {
		t.Fatalf("status line after the point fired: %q", statusLine)
	}
}

// TestFooterSaysResumeWhilePaused: while the producer is paused, p resumes
// it, and the footer and the ? view say so.
func TestFooterSaysResumeWhilePaused(t *testing.T) {
	m := newModel(sceneRunning(), &fakeController{})
	footer := func(m tea.Model) string {
		lines := strings.Split(m.View(), "\n")
		return lines[len(lines)-1]
	}
	if got := footer(m); !strings.Contains(got, "p pause ·") {
		t.Fatalf("footer while publishing: %q", got)
	}
	m, _ = m.Update(Inputs{board.ProcStatus{Name: board.Producer, At: at(70), Event: status.Event{Type: status.Paused}}})
	if got := footer(m); !strings.Contains(got, "p resume ·") || strings.Contains(got, "pause") {
		t.Fatalf("footer while paused: %q", got)
	}
	if view := press(t, m, "?").View(); !strings.Contains(view, "resume producer") || strings.Contains(view, "pause producer") {
		t.Fatalf("? view while paused:\n%s", view)
	}
	m, _ = m.Update(Inputs{board.ProcStatus{Name: board.Producer, At: at(71), Event: status.Event{Type: status.Resumed}}})
	if got := footer(m); !strings.Contains(got, "p pause ·") {
		t.Fatalf("footer after the resume: %q", got)
	}
}

// Every "done" status is whole on a 120-column line (two cells for its
// mark), with the values a lab gives it.
func TestDoneWordsFitTheProjectorWidth(t *testing.T) {
	m := newModel(sceneRunning(), &fakeController{}).(Model)
	values := map[action.Name][]string{
		action.Acks:          {"1", "all"},
		action.Rebuild:       {"replay", "snapshot", "changelog"},
		action.AddPartitions: {"12"},
		action.InjectBad:     {"12"},
		action.Scale:         {"3"},
		action.Pause:         {"1,234,567"},
	}
	for op, words := range doneWords {
		for _, v := range append(values[op], "") {
			r := ActionResultMsg{Op: op, Name: "consumer-current", Value: v}
			if op == action.AddPartitions {
				r.Name = "sensor-data"
			}
			if s := words(m, r); len([]rune(s))+2 > 120 {
				t.Errorf("%s %q: %d cells, over 118: %q", op, v, len([]rune(s)), s)
			}
		}
	}
}

// TestCrashPointChosenBeforeArmed: c c arms after-checkpoint alone, once c
// rests: after-delta, which fires within a fraction of a second while the
// producer runs, is passed over, not armed.
func TestCrashPointChosenBeforeArmed(t *testing.T) {
	ctl := &fakeController{}
	m, _ := New(sceneRunning().b, ctl, Options{ArmAfter: time.Hour}).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	m, _ = m.Update(keyMsg("c"))
	m, _ = m.Update(keyMsg("c"))
	if !strings.Contains(m.View(), "c: crash point after-checkpoint, armed in 3600.0 s (c again: next point)") {
		t.Fatalf("the second c does not show its choice:\n%s", m.View())
	}
	m, cmd := m.Update(crashChoiceDue{seq: 1}) // the first c's rest: stale
	if cmd != nil || len(ctl.Calls()) != 0 {
		t.Fatalf("the first c's rest armed something: %v", ctl.Calls())
	}
	m = drain(m.Update(crashChoiceDue{seq: 2}))
	if got := ctl.Calls(); !slices.Equal(got, []string{"arm consumer-usage after-checkpoint"}) {
		t.Fatalf("calls %v, want after-checkpoint armed alone", got)
	}
	if !strings.Contains(m.View(), "crash point after-checkpoint armed") {
		t.Fatalf("no armed status:\n%s", m.View())
	}
}
