package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// TestEveryKeyHasAHandler: every action of the registry with keys has its
// handler (its own in keyHandlers, or its call on the lab), and every
// handler belongs to a keyed action.
func TestEveryKeyHasAHandler(t *testing.T) {
	km := DefaultKeyMap()
	for _, a := range action.All() {
		keyed := len(km.Binding(a.Name).Keys()) > 0
		if _, ok := handlerOf(a.Name); ok != keyed {
			t.Errorf("%s: keys %q, handler %v", a.Name, km.Binding(a.Name).Keys(), ok)
		}
	}
	for n, h := range keyHandlers {
		if _, ok := action.Lookup(n); !ok || h == nil {
			t.Errorf("handler for %q: not an action of the registry", n)
		}
	}
}

// TestJumpKeysFollowTheDisplayOrder: digit i selects the i-th process of
// board.Canonical, and the help says how many digits there are.
func TestJumpKeysFollowTheDisplayOrder(t *testing.T) {
	b := DefaultKeyMap().Binding(action.Jump)
	var want []string
	for i := range board.Canonical {
		want = append(want, fmt.Sprint(i+1))
	}
	if !slices.Equal(b.Keys(), want) || b.Help().Key != fmt.Sprintf("1-%d", len(board.Canonical)) {
		t.Fatalf("jump keys %q, help %q", b.Keys(), b.Help().Key)
	}
}

// TestReadOnlyKeysAreTheWatchers: a read-only view keeps exactly the keys
// the registry lets a watcher use.
func TestReadOnlyKeysAreTheWatchers(t *testing.T) {
	km := DefaultKeyMap().readOnly()
	for _, a := range action.All() {
		if len(km.Binding(a.Name).Keys()) == 0 {
			continue
		}
		if km.Enabled(a.Name) != a.Watcher {
			t.Errorf("%s: enabled %v in a read-only view, watcher %v", a.Name, km.Enabled(a.Name), a.Watcher)
		}
	}
}

// An attendee's lab has no broker or store row: its help and status line
// say 1-4, not 1-6; a lab with every row says 1-6.
func TestJumpHelpCountsTheRows(t *testing.T) {
	for _, tc := range []struct {
		procs []string
		want  string
	}{
		{[]string{board.Producer, board.Current, board.Usage, board.Query}, "1-4"},
		{board.Canonical, "1-6"},
	} {
		b := board.New(tc.procs, board.Config{Topic: "t"})
		m, _ := tea.Model(New(b, &fakeController{}, Options{})).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
		plain := m.View()
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
		help := m.View()
		for what, v := range map[string]string{"screen": plain, "help": help} {
			if !strings.Contains(v, tc.want) || strings.Contains(v, map[string]string{"1-4": "1-6", "1-6": "1-4"}[tc.want]) {
				t.Errorf("%d rows, %s: want %s only:\n%s", len(tc.procs), what, tc.want, v)
			}
		}
	}
}
