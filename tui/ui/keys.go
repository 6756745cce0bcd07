package ui

import (
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is the dashboard's keys. They are a fixed contract: demo tapes and
// workshop notes depend on them.
type KeyMap struct {
	Up, Down, Next, Prev key.Binding
	Jump                 key.Binding // 1–6
	Crash                key.Binding // x
	Stop                 key.Binding // s
	Restart              key.Binding // r
	Freeze               key.Binding // z
	Pause                key.Binding // p
	Mode                 key.Binding // m
	Reset                key.Binding // e
	CrashPoint           key.Binding // c
	ResetLab             key.Binding // R
	InjectBad            key.Binding // b
	ScaleUp, ScaleDown   key.Binding // + and -: consumer-usage instances
	Logs                 key.Binding // l
	Partitions           key.Binding // t: the topic's partitions in full
	Scenarios            key.Binding // g (reserved)
	Help                 key.Binding // ?
	Close                key.Binding // esc
	Quit                 key.Binding // q, ctrl+c
	// Scroll the narration or the log view.
	ScrollUp, ScrollDown key.Binding // [ and ], pgup and pgdown

	// readOnlyView: the composite help entries (scale, scroll) are left out.
	readOnlyView bool
}

// DefaultKeyMap returns the key contract.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "select")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "next process")),
		Next:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next process")),
		Prev:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous process")),
		Jump:       key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "jump")),
		Crash:      key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "crash (SIGKILL)")),
		Stop:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "stop")),
		Restart:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "start/restart")),
		Freeze:     key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "freeze/thaw")),
		Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause producer")),
		Mode:       key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "usage naive/guarded")),
		Reset:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "usage latest/earliest")),
		CrashPoint: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "usage crash point")),
		ResetLab:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reset lab (usage 0)")),
		InjectBad:  key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "inject bad records")),
		ScaleUp:    key.NewBinding(key.WithKeys("+"), key.WithHelp("+", "one more consumer-usage (max 3)")),
		ScaleDown:  key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "one consumer-usage less")),
		Logs:       key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "logs")),
		Partitions: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "partitions")),
		Scenarios:  key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "scenarios"), key.WithDisabled()),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Close:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		ScrollUp:   key.NewBinding(key.WithKeys("[", "pgup"), key.WithHelp("[", "scroll narration/logs up")),
		ScrollDown: key.NewBinding(key.WithKeys("]", "pgdown"), key.WithHelp("]", "scroll narration/logs down")),
	}
}

// ShortHelp is the footer line (help.KeyMap), with terse descriptions.
func (k KeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	return []key.Binding{
		k.Up, k.Jump, short(k.Crash, "crash"), k.Stop, short(k.Restart, "restart"), short(k.Pause, "pause"),
		short(k.Mode, "mode"), short(k.Reset, "reset"), short(k.CrashPoint, "crash point"),
		short(k.ResetLab, "reset lab"), k.Logs, k.Partitions,
		k.Scenarios, k.scroll(), k.Help, k.Quit,
	}
}

// FullHelp is the '?' view (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding {
	up := k.Up
	up.SetHelp("↑/k", "previous process")
	return [][]key.Binding{
		{up, k.Down, k.Next, k.Jump, k.scale(), k.Partitions},
		{k.Crash, k.Stop, k.Restart, k.Freeze, k.Pause},
		{k.Mode, k.Reset, k.CrashPoint, k.ResetLab, k.InjectBad, k.Scenarios},
		{k.Logs, k.scroll(), k.Help, k.Close, k.Quit},
	}
}

// readOnly leaves a watcher's keys: help, the partitions view, close and
// quit (they change only what this viewer sees). The footer and the ?
// view then list only those.
func (k KeyMap) readOnly() KeyMap {
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.Next, &k.Prev, &k.Jump, &k.Crash, &k.Stop, &k.Restart,
		&k.Freeze, &k.Pause, &k.Mode, &k.Reset, &k.CrashPoint, &k.ResetLab, &k.InjectBad, &k.ScaleUp,
		&k.ScaleDown, &k.Logs, &k.Scenarios, &k.ScrollUp, &k.ScrollDown} {
		b.SetEnabled(false)
	}
	k.readOnlyView = true
	return k
}

// scale is + and - as one help entry: consumer-usage instances, 1 to 3.
func (k KeyMap) scale() key.Binding {
	b := key.NewBinding(key.WithKeys("+", "-"), key.WithHelp("+ -", "scale usage"))
	b.SetEnabled(!k.readOnlyView)
	return b
}

// scroll is [ and ] as one help entry.
func (k KeyMap) scroll() key.Binding {
	b := key.NewBinding(key.WithKeys("[", "]"), key.WithHelp("[ ]", "scroll"))
	b.SetEnabled(!k.readOnlyView)
	return b
}
