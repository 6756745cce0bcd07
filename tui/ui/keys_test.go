package ui

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// TestEveryKeyHasAHandler: every action of the registry with keys has its
// handler in keyHandlers, and every handler belongs to a keyed action.
func TestEveryKeyHasAHandler(t *testing.T) {
	km := DefaultKeyMap()
	for _, a := range action.All() {
		keyed := len(km.Binding(a.Name).Keys()) > 0
		if _, ok := keyHandlers[a.Name]; ok != keyed {
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
