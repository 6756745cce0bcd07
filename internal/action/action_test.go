package action

import (
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// TestRegistryWellFormed: names and keys are unique, each keyed action has
// a help line, only keyed actions carry keys' properties.
func TestRegistryWellFormed(t *testing.T) {
	names, keys := map[Name]bool{}, map[string]Name{}
	for _, a := range All() {
		if a.Name == "" || names[a.Name] {
			t.Errorf("name %q empty or twice", a.Name)
		}
		names[a.Name] = true
		for _, k := range a.Keys {
			if other, ok := keys[k]; ok {
				t.Errorf("key %q is %s's and %s's", k, other, a.Name)
			}
			keys[k] = a.Name
		}
		if len(a.Keys) > 0 || a.Digits {
			checkKeyed(t, a)
		} else {
			checkUnkeyed(t, a)
		}
		if a.Script && strings.ContainsAny(string(a.Name), " \t#") {
			t.Errorf("%s: not a verb a script line can start with", a.Name)
		}
	}
}

func checkKeyed(t *testing.T, a Action) {
	t.Helper()
	if a.Help.Key == "" || a.Help.Desc == "" || a.Doc == "" {
		t.Errorf("%s: a key without a help line or a doc", a.Name)
	}
	if a.Digits && len(a.Keys) > 0 {
		t.Errorf("%s: digits and keys of its own", a.Name)
	}
	if a.Short != (Line{}) && a.Short.Key == "" {
		t.Errorf("%s: a short line without its key", a.Name)
	}
	if a.Hint != "" && a.Digits {
		t.Errorf("%s: the narration cannot ask for a digit", a.Name)
	}
}

func checkUnkeyed(t *testing.T, a Action) {
	t.Helper()
	if a.Help != (Line{}) || a.Short != (Line{}) || a.Doc != "" || a.Watcher || a.Pinned || a.OffScript || a.Hint != "" || a.Optional {
		t.Errorf("%s: no key, but key properties %+v", a.Name, a)
	}
	if !a.Script {
		t.Errorf("%s: neither a key nor a script verb", a.Name)
	}
}

// TestHelpShowsEveryKey: the footer and the ? view name only keyed
// actions, and the ? view shows every keyed action but shift+tab (tab's
// reverse, left out to keep the columns short).
func TestHelpShowsEveryKey(t *testing.T) {
	inHelp := map[Name]bool{}
	check := func(where string, items []Item) {
		for _, it := range items {
			if len(it.Actions) == 0 || (len(it.Actions) > 1 && it.Line == nil) {
				t.Errorf("%s: item %+v", where, it)
			}
			for _, n := range it.Actions {
				a, ok := Lookup(n)
				if !ok || (len(a.Keys) == 0 && !a.Digits) {
					t.Errorf("%s names %q, not a keyed action", where, n)
				}
			}
		}
	}
	check("footer", Footer())
	for _, col := range HelpColumns() {
		check("? view", col)
		for _, it := range col {
			for _, n := range it.Actions {
				inHelp[n] = true
			}
		}
	}
	for _, a := range All() {
		if (len(a.Keys) > 0 || a.Digits) && !inHelp[a.Name] && a.Name != Prev {
			t.Errorf("the ? view does not show %s", a.Name)
		}
	}
}

func TestAsk(t *testing.T) {
	for _, c := range []struct {
		n                    Name
		process, value, want string
	}{
		{Crash, "consumer-current", "", "press x to crash consumer-current (SIGKILL)"},
		{Mode, "consumer-usage", "guarded", "press m to switch consumer-usage to guarded (it restarts)"},
		{Pause, "producer", "", "press p to pause or resume the producer"},
		{ScaleUp, "consumer-usage", "", "press + to start one more consumer-usage instance in its group"},
	} {
		if got := Of(c.n).Ask(c.process, c.value); got != c.want {
			t.Errorf("%s: %q, want %q", c.n, got, c.want)
		}
	}
}

// TestBoardRequestsAreActionNames: the board's request of an operation
// (Request.Op: "crashing…") is the action's name, so one name goes from
// the key to the board, the result and the words shown.
func TestBoardRequestsAreActionNames(t *testing.T) {
	for op, n := range map[string]Name{
		board.OpCrash: Crash, board.OpStop: Stop, board.OpStart: Start, board.OpRestart: Restart,
		board.OpPause: Pause, board.OpResume: Resume, board.OpFreeze: Freeze, board.OpThaw: Thaw,
		board.OpInjectBad: InjectBad, board.OpHistory: History,
	} {
		if op != string(n) {
			t.Errorf("board op %q for action %q", op, n)
		}
	}
}
