package ui

import (
	"bytes"
	"slices"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// TestProgram runs the model in a real bubbletea program: keys arrive as
// terminal input, Controller calls run in Cmds, board inputs come through
// Send (as Forward hands over the lab's Inputs), the board's clock only from board.Tick.
func TestProgram(t *testing.T) {
	ctl := &fakeController{}
	s := sceneRunning()
	tm := teatest.NewTestModel(t, New(s.b, ctl, Options{}), teatest.WithInitialTermSize(120, 36))
	waitFor := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitFor("consumer-usage")
	tm.Type("3")
	tm.Type("x")
	waitFor("consumer-usage was SIGKILLed")
	if got := ctl.Calls(); !slices.Equal(got, []string{"crash consumer-usage"}) {
		t.Fatalf("calls %q", got)
	}
	tm.Send(Inputs{board.ProcExited{Name: board.Usage, PID: 4111, At: at(65), Signal: "SIGKILL"}})
	waitFor("crashed (SIGKILL)")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(Model)
	if p := final.Board().Process(board.Usage); p.State != board.Crashed || p.Crashes != 1 {
		t.Fatalf("final usage %s crashes %d", p.State, p.Crashes)
	}
}
