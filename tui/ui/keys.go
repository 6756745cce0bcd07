package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// KeyMap is the dashboard's keys, one binding per keyed action of the
// registry (internal/action). They are a fixed contract: demo tapes and
// workshop notes depend on them. A KeyMap is a value: its methods that
// change it return a changed copy.
type KeyMap struct {
	bindings map[action.Name]key.Binding
	byKey    map[string]action.Name
	// undoing: actions whose key now undoes what it did (their Undo lines).
	undoing map[action.Name]bool
}

// DefaultKeyMap returns the key contract. The jump digits follow the
// process display order (board.Canonical).
func DefaultKeyMap() KeyMap {
	k := KeyMap{bindings: map[action.Name]key.Binding{}, byKey: map[string]action.Name{}}
	for _, a := range action.All() {
		keys, label := a.Keys, a.Help.Key
		if a.Digits {
			keys, label = digitKeys(len(board.Canonical))
		}
		if len(keys) == 0 {
			continue
		}
		opts := []key.BindingOpt{key.WithKeys(keys...), key.WithHelp(label, a.Help.Desc)}
		if a.Optional {
			opts = append(opts, key.WithDisabled())
		}
		k.bindings[a.Name] = key.NewBinding(opts...)
		for _, s := range keys {
			k.byKey[s] = a.Name
		}
	}
	return k
}

// digitKeys are the keys 1..n and their help label ("1-6").
func digitKeys(n int) ([]string, string) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i + 1)
	}
	return keys, fmt.Sprintf("1-%d", n)
}

// withJumpRows returns the key map whose jump help says 1-n, n the
// highest jump key of the board's rows: an attendee's lab, whose broker
// and store are the presenter's, says 1-4. The other digits stay bound
// (they say that process is not supervised here).
func (k KeyMap) withJumpRows(n int) KeyMap {
	b, ok := k.bindings[action.Jump]
	if !ok || n < 1 {
		return k
	}
	bindings := make(map[action.Name]key.Binding, len(k.bindings))
	for name, kb := range k.bindings {
		bindings[name] = kb
	}
	_, label := digitKeys(n)
	b.SetHelp(label, b.Help().Desc)
	bindings[action.Jump] = b
	k.bindings = bindings
	return k
}

// jumpLabel is the jump keys' help ("1-6").
func (k KeyMap) jumpLabel() string { return k.Binding(action.Jump).Help().Key }

// Binding is the action's binding (a disabled empty one for an action
// without keys).
func (k KeyMap) Binding(n action.Name) key.Binding {
	if b, ok := k.bindings[n]; ok {
		return b
	}
	return key.NewBinding(key.WithDisabled())
}

// Enabled reports whether the action's key works.
func (k KeyMap) Enabled(n action.Name) bool {
	b, ok := k.bindings[n]
	return ok && b.Enabled()
}

// WithEnabled returns the key map with the actions' keys switched on or off.
func (k KeyMap) WithEnabled(on bool, names ...action.Name) KeyMap {
	bindings := make(map[action.Name]key.Binding, len(k.bindings))
	for n, b := range k.bindings {
		bindings[n] = b
	}
	for _, n := range names {
		if b, ok := bindings[n]; ok {
			b.SetEnabled(on)
			bindings[n] = b
		}
	}
	k.bindings = bindings
	return k
}

// WithUndoing returns the key map with the actions' help read as undoing
// what they did (on) or as doing it (off).
func (k KeyMap) WithUndoing(on bool, names ...action.Name) KeyMap {
	undoing := make(map[action.Name]bool, len(k.undoing)+len(names))
	for n, u := range k.undoing {
		undoing[n] = u
	}
	for _, n := range names {
		undoing[n] = on
	}
	k.undoing = undoing
	return k
}

// lines are an item's footer and ? view lines, its action's Undo lines
// while its key undoes what it did.
func (k KeyMap) lines(it action.Item) (short, full action.Line) {
	short, full = it.Short(), it.Full()
	if a := action.Of(it.Actions[0]); len(it.Actions) == 1 && k.undoing[a.Name] && a.Undo != (action.Line{}) {
		short, full = a.UndoShort, a.Undo
	}
	return short, full
}

// Action is the action the key asks for, enabled or not.
func (k KeyMap) Action(msg tea.KeyMsg) (action.Name, bool) {
	n, ok := k.byKey[msg.String()]
	return n, ok
}

// item is a help item as a binding: its line, enabled while one of its
// actions is.
func (k KeyMap) item(it action.Item, line action.Line) key.Binding {
	var keys []string
	enabled := false
	for _, n := range it.Actions {
		b := k.Binding(n)
		keys = append(keys, b.Keys()...)
		enabled = enabled || b.Enabled()
	}
	if n := it.Actions[0]; action.Of(n).Digits {
		line.Key = k.Binding(n).Help().Key // "1-6": as many as the processes
	}
	b := key.NewBinding(key.WithKeys(keys...), key.WithHelp(line.Key, line.Desc))
	b.SetEnabled(enabled)
	return b
}

// ShortHelp is the footer line (help.KeyMap), with terse descriptions.
func (k KeyMap) ShortHelp() []key.Binding {
	var out []key.Binding
	for _, it := range action.Footer() {
		short, _ := k.lines(it)
		out = append(out, k.item(it, short))
	}
	return out
}

// FullHelp is the '?' view (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, col := range action.HelpColumns() {
		var c []key.Binding
		for _, it := range col {
			_, full := k.lines(it)
			c = append(c, k.item(it, full))
		}
		out = append(out, c)
	}
	return out
}

// Pinned are the keys the footer ends with at every width.
func (k KeyMap) Pinned() []key.Binding {
	var out []key.Binding
	for _, a := range action.All() {
		if a.Pinned {
			out = append(out, k.Binding(a.Name))
		}
	}
	return out
}

// readOnly leaves a watcher's keys: help, the partitions and why views,
// close and quit (they change only what this viewer sees). The footer and the ?
// view then list only those.
func (k KeyMap) readOnly() KeyMap {
	var off []action.Name
	for _, a := range action.All() {
		if !a.Watcher {
			off = append(off, a.Name)
		}
	}
	return k.WithEnabled(false, off...)
}
