package lab

import (
	"context"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/script"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

// TestNewActionIsOneEntry: an action added as nothing but one entry of the
// registry and its handler in the lab works from a key, from a script line
// and shows in the help.
func TestNewActionIsOneEntry(t *testing.T) {
	tl := newTestLab(t)
	remove := action.Register(action.Action{Name: "touch", Keys: []string{"!"},
		Help: action.Line{Key: "!", Desc: "touch the producer"}, Doc: "touch the producer",
		Script: true, Target: action.TargetProducer})
	defer remove()
	var mu sync.Mutex
	var got []action.Call
	handlers["touch"] = func(_ *Lab, _ context.Context, c action.Call) action.Result {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, c)
		return c.Result(nil)
	}
	defer delete(handlers, "touch")
	calls := func() []action.Call {
		mu.Lock()
		defer mu.Unlock()
		return append([]action.Call(nil), got...)
	}

	// The key.
	var m tea.Model = ui.New(tl.NewBoard(), tl.Lab, ui.Options{})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("!")})
	if cmd == nil {
		t.Fatal("the key asked for nothing")
	}
	m, _ = m.Update(cmd())
	if c := calls(); len(c) != 1 || c[0] != (action.Call{Name: "touch", Process: board.Producer}) {
		t.Fatalf("after the key: calls %+v", c)
	}
	if v := m.View(); !strings.Contains(v, "touch producer done") {
		t.Errorf("the status line does not say it was done:\n%s", v)
	}

	// The script line.
	actions, err := script.ParseString("touch producer")
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.RunScript(context.Background(), actions); err != nil {
		t.Fatal(err)
	}
	if c := calls(); len(c) != 2 || c[1] != (action.Call{Name: "touch", Process: board.Producer}) {
		t.Fatalf("after the script: calls %+v", c)
	}

	// The help.
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	if v := m.View(); !strings.Contains(v, "touch the producer") {
		t.Errorf("the help does not list it:\n%s", v)
	}
}
