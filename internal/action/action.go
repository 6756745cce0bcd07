// Package action is the one list of what can be asked of the dashboard: by
// a key, by a line of a script, or by a scenario step. Each action says its
// keys, its help lines, whether the script language has it, whether a
// read-only watcher may use it and how a scenario's narration asks for it.
//
// It is data only. A key, a script line and a scenario step each build one
// Call from it, and the lab's one handler table carries every Call out
// (internal/lab/do.go); the UI keeps handlers only for the view's own keys
// and for keys that check the viewer's board first. Tests on each side
// check that every action has its handler and no handler is left without
// an action.
package action

import "strings"

// Name is an action. For an action of the script language it is also the
// verb a script line starts with ("crash", "crash-at").
type Name string

// The keyed actions, in the order the README lists them.
const (
	Up         Name = "up"
	Down       Name = "down"
	Next       Name = "next"
	Prev       Name = "prev"
	Jump       Name = "jump"
	Crash      Name = "crash"
	Stop       Name = "stop"
	Restart    Name = "restart"
	Freeze     Name = "freeze"
	Pause      Name = "pause"
	Acks       Name = "acks"
	Mode       Name = "mode"
	Reset      Name = "reset"
	CrashAt    Name = "crash-at"
	ResetLab   Name = "reset-lab"
	InjectBad  Name = "inject-bad"
	Rebuild    Name = "rebuild"
	ScaleUp    Name = "scale-up"
	ScaleDown  Name = "scale-down"
	Logs       Name = "logs"
	Partitions Name = "partitions"
	Why        Name = "why"
	Scenarios  Name = "scenarios"
	ScrollUp   Name = "scroll-up"
	ScrollDown Name = "scroll-down"
	Help       Name = "help"
	Close      Name = "close"
	Quit       Name = "quit"
)

// The actions only a script has (a key toggles freeze and thaw, pause and
// resume, and starts what r would restart).
const (
	Wait         Name = "wait"
	Start        Name = "start"
	Resume       Name = "resume"
	Thaw         Name = "thaw"
	WaitCaughtUp Name = "wait-caught-up"
	Scale        Name = "scale"
	EffectDelay  Name = "effect-delay"
	WaitHeld     Name = "wait-held"
	WaitDown     Name = "wait-down"
	WaitISR      Name = "wait-isr"
	WaitBlocked  Name = "wait-blocked"
	WaitLeads    Name = "wait-leads"
	WaitBalanced Name = "wait-balanced"
	History      Name = "history"
	Backlog      Name = "backlog"
)

// The topic's partitions: P adds one (after a y); only a script recreates
// the topic with 3, the way back (a topic cannot shrink).
const (
	AddPartitions Name = "add-partitions"
	RecreateTopic Name = "recreate-topic"
	// Retention gives the topic a short retention (T, after a y): what it
	// deletes is gone; WaitDeleted waits until it deleted messages
	// consumer-usage had not read.
	Retention   Name = "retention"
	WaitDeleted Name = "wait-deleted"
	// Park has the producer stop publishing one sensor (a machine that
	// stopped); WaitLastDeleted waits until retention deleted a sensor's
	// last message.
	Park            Name = "park"
	WaitLastDeleted Name = "wait-last-deleted"
)

// Target is what a key acts on.
type Target int

const (
	// TargetView: only what this viewer sees (selection, overlays, quit).
	TargetView Target = iota
	// TargetSelected: the selected process.
	TargetSelected
	// TargetUsage: consumer-usage, whatever is selected.
	TargetUsage
	// TargetProducer: the producer, whatever is selected.
	TargetProducer
	// TargetCurrent: consumer-current, whatever is selected.
	TargetCurrent
	// TargetTopic: the topic, whatever is selected.
	TargetTopic
)

// Line is a help line: the key as the help shows it and what it does.
type Line struct{ Key, Desc string }

// Action is one entry of the registry.
type Action struct {
	Name Name
	// Keys are the key strings that ask for it (bubbletea's KeyMsg.String()).
	Keys []string
	// Digits: the keys are the digits 1..N of the process display order;
	// the front end that knows the processes binds them (Keys is empty).
	Digits bool
	// Help is the action's line in the ? view; Short its line in the
	// footer when it differs (a zero Short: Help).
	Help  Line
	Short Line
	// Undo and UndoShort replace Help and Short while what the key did
	// holds and pressing it again undoes it (p while the producer is
	// paused resumes it); zero: the key reads the same either way.
	Undo      Line
	UndoShort Line
	// Doc is what it does in full, for the README's key table (markdown).
	Doc string
	// Script: the script language has it, as a line starting with Name.
	Script bool
	// Watcher: a read-only watcher may use it (it changes only what that
	// viewer sees).
	Watcher bool
	// Optional: off until the dashboard offers what it needs (the scenario
	// picker needs scenarios).
	Optional bool
	// Pinned: the footer ends with it at every width.
	Pinned bool
	Target Target
	// OffScript: pressed while a scenario step waits for another key, the
	// narration says it was not the step's.
	OffScript bool
	// Wait: a script's wait, which watches the board and changes nothing
	// (the script runs it; every other script action is a call the lab
	// carries out).
	Wait bool
	// Hint is how a scenario's narration asks for it, after "press KEY":
	// {process} and {value} stand for the step's process and value. Only
	// an action with a hint may be a step's Press.
	Hint string
	// BuiltInUsage: it changes what only the built-in consumer-usage has
	// (a mode, a start strategy, crash points, an effect delay). While the
	// lab runs the user's command (--usage-cmd) the lab refuses it and
	// the footer leaves its key out.
	BuiltInUsage bool
}

// BuiltInUsageOnly lists the actions that only the built-in
// consumer-usage takes.
func BuiltInUsageOnly() []Name {
	var out []Name
	for _, a := range registry {
		if a.BuiltInUsage {
			out = append(out, a.Name)
		}
	}
	return out
}

// ByLab reports whether the lab carries the action out (a call to its
// handler table): every script action but the waits, and every key that
// acts on more than what its viewer sees.
func (a Action) ByLab() bool {
	return !a.Wait && (a.Script || a.Target != TargetView)
}

// Key is the first of the action's keys, as the narration names it ("" if
// it has none).
func (a Action) Key() string {
	if len(a.Keys) == 0 {
		return ""
	}
	return a.Keys[0]
}

// Ask is the narration's request for the action: "press x to crash
// consumer-current (SIGKILL)".
func (a Action) Ask(process, value string) string {
	what := strings.NewReplacer("{process}", process, "{value}", value).Replace(a.Hint)
	return strings.TrimSpace("press " + a.Key() + " " + what)
}

var registry = []Action{
	{Name: Up, Keys: []string{"up", "k"}, Help: Line{"↑/k", "previous process"}, Short: Line{"↑/↓", "select"},
		Doc: "select the previous process"},
	{Name: Down, Keys: []string{"down", "j"}, Help: Line{"↓/j", "next process"},
		Doc: "select the next process"},
	{Name: Next, Keys: []string{"tab"}, Help: Line{"tab", "next process"},
		Doc: "next process"},
	{Name: Prev, Keys: []string{"shift+tab"}, Help: Line{"shift+tab", "previous process"},
		Doc: "previous process"},
	{Name: Jump, Digits: true, Help: Line{"1-6", "jump"},
		Doc: "jump to a process, in the table's order:"},
	{Name: Crash, Keys: []string{"x"}, Help: Line{"x", "crash (SIGKILL)"}, Short: Line{"x", "crash"},
		Doc:    "crash the selected process (SIGKILL); it stays down until `r`",
		Script: true, Target: TargetSelected, OffScript: true, Hint: "to crash {process} (SIGKILL)"},
	{Name: Stop, Keys: []string{"s"}, Help: Line{"s", "stop"},
		Doc:    "stop the selected process (SIGTERM)",
		Script: true, Target: TargetSelected, OffScript: true, Hint: "to stop {process} (SIGTERM)"},
	{Name: Restart, Keys: []string{"r"}, Help: Line{"r", "start/restart"}, Short: Line{"r", "restart"},
		Doc:    "start or restart the selected process",
		Script: true, Target: TargetSelected, OffScript: true, Hint: "to restart {process}"},
	{Name: Freeze, Keys: []string{"z"}, Help: Line{"z", "freeze/thaw"},
		Doc:    "freeze or thaw the selected process (SIGSTOP/SIGCONT to its process group: a hung process)",
		Script: true, Target: TargetSelected},
	{Name: Pause, Keys: []string{"p"}, Help: Line{"p", "pause producer"}, Short: Line{"p", "pause"},
		Undo: Line{"p", "resume producer"}, UndoShort: Line{"p", "resume"},
		Doc:    "pause or resume the producer",
		Script: true, Target: TargetProducer, OffScript: true, Hint: "to pause or resume the producer"},
	{Name: Acks, Keys: []string{"a"}, Help: Line{"a", "acks all/1/0"}, Short: Line{"a", "acks"},
		Doc:    "the producer's acks: all (idempotent) / 1 (the leader alone, idempotence off) / 0 (no confirmation of receipt: a record the broker never stored is lost, counted as sent); it flushes and switches at once",
		Script: true, Target: TargetProducer, OffScript: true, Hint: "until the producer writes with acks={value} (a cycles all → 1 → 0)"},
	{Name: Mode, Keys: []string{"m"}, Help: Line{"m", "usage naive/guarded"}, Short: Line{"m", "mode"},
		Doc:    "consumer-usage naive / guarded (a running one restarts)",
		Script: true, Target: TargetUsage, OffScript: true, Hint: "to switch {process} to {value} (it restarts)", BuiltInUsage: true},
	{Name: Reset, Keys: []string{"e"}, Help: Line{"e", "usage latest/earliest"}, Short: Line{"e", "reset"},
		Doc:    "consumer-usage offset reset latest / earliest (a running one restarts)",
		Script: true, Target: TargetUsage, OffScript: true, Hint: "to switch {process} to {value} (it restarts)", BuiltInUsage: true},
	{Name: CrashAt, Keys: []string{"c"}, Help: Line{"c", "usage crash point"}, Short: Line{"c", "crash point"},
		Doc:    "consumer-usage crash point: none → after-delta → after-checkpoint → none; the point c rests on is armed 1.5 s later, so c c passes over after-delta",
		Script: true, Target: TargetUsage, OffScript: true, Hint: "to arm the crash point after-delta on {process}", BuiltInUsage: true},
	{Name: ResetLab, Keys: []string{"R"}, Help: Line{"R", "reset lab (usage 0)"}, Short: Line{"R", "reset lab"},
		Doc:    "reset the lab: a new baseline, usage records and checkpoints cleared, usage counted from 0",
		Script: true, Target: TargetUsage, OffScript: true},
	{Name: InjectBad, Keys: []string{"b"}, Help: Line{"b", "inject bad records"},
		Doc:    "inject bad records: one malformed record of every kind",
		Script: true, Target: TargetProducer},
	{Name: Rebuild, Keys: []string{"B"}, Help: Line{"B", "rebuild strategy"}, Short: Line{"B", "rebuild"},
		Doc: "consumer-current's rebuild strategy: replay → snapshot → changelog → replay; it applies at its next start, " +
			"and a running one prepares it at once (writes a snapshot, publishes its changelog)",
		Script: true, Target: TargetCurrent, OffScript: true},
	{Name: AddPartitions, Keys: []string{"P"}, Help: Line{"P", "add a partition (asks y)"}, Short: Line{"P", "+partition"},
		Doc:    "add a partition to the topic, after a `y`: every key whose CRC-32 modulo the new count differs moves to another partition (a topic cannot shrink: `recreate-topic` makes it 3 again)",
		Script: true, Target: TargetTopic, OffScript: true,
		Hint: "and then y to grow the topic to {value} partitions"},
	{Name: Retention, Keys: []string{"T"}, Help: Line{"T", "retention (asks y)"}, Short: Line{"T", "retention"},
		Doc: "give the topic a short retention (20 s, or `--retention`'s) with small segments, after a `y`: Kafka deletes its oldest records " +
			"and each partition's log start moves forward; what is deleted is gone (`retention DURATION` in a script)",
		Script: true, Target: TargetTopic, OffScript: true,
		Hint: "and then y to give the topic a retention of {value}"},
	{Name: ScaleUp, Keys: []string{"+"}, Help: Line{"+", "one more consumer-usage (max 3)"},
		Doc:    "one consumer-usage instance more (up to 3, in one group)",
		Target: TargetUsage,
		Hint:   "to start one more {process} instance in its group"},
	{Name: ScaleDown, Keys: []string{"-"}, Help: Line{"-", "one consumer-usage less"},
		Doc:    "one consumer-usage instance less",
		Target: TargetUsage},
	{Name: Logs, Keys: []string{"l"}, Help: Line{"l", "logs"},
		Doc: "the selected process's logs"},
	{Name: Partitions, Keys: []string{"t"}, Help: Line{"t", "partitions"},
		Doc:     "the topic's partitions in full, in the sensors' and usage's place",
		Watcher: true},
	{Name: Why, Keys: []string{"w"}, Help: Line{"w", "why (drift)"}, Short: Line{"w", "why"},
		Doc:     "why: the messages that make the drift, for the total, then (w again) each drifting sensor",
		Watcher: true},
	{Name: Scenarios, Keys: []string{"g"}, Help: Line{"g", "scenarios"},
		Doc:      "guided scenarios",
		Optional: true},
	{Name: ScrollUp, Keys: []string{"[", "pgup"}, Help: Line{"[", "scroll up (narration, logs, t)"},
		Doc: "scroll the narration, the logs or the partitions view up"},
	{Name: ScrollDown, Keys: []string{"]", "pgdown"}, Help: Line{"]", "scroll down (narration, logs, t)"},
		Doc: "scroll the narration, the logs or the partitions view down"},
	{Name: Help, Keys: []string{"?"}, Help: Line{"?", "help"},
		Doc:     "help: every key",
		Watcher: true, Pinned: true},
	{Name: Close, Keys: []string{"esc"}, Help: Line{"esc", "close"},
		Doc:     "close the help, the logs, the partitions or a finished scenario's narration",
		Watcher: true},
	{Name: Quit, Keys: []string{"q", "ctrl+c"}, Help: Line{"q", "quit"},
		Doc:    "quit",
		Script: true, Watcher: true, Pinned: true},

	{Name: Wait, Script: true, Wait: true},
	{Name: Start, Script: true},
	{Name: Resume, Script: true},
	{Name: Thaw, Script: true},
	{Name: WaitCaughtUp, Script: true, Wait: true},
	{Name: Scale, Script: true},
	{Name: EffectDelay, Script: true, BuiltInUsage: true},
	{Name: WaitHeld, Script: true, Wait: true},
	{Name: WaitDown, Script: true, Wait: true},
	{Name: WaitISR, Script: true, Wait: true},
	{Name: WaitBlocked, Script: true, Wait: true},
	{Name: WaitLeads, Script: true, Wait: true},
	{Name: WaitBalanced, Script: true, Wait: true},
	{Name: History, Script: true},
	{Name: Backlog, Script: true},
	{Name: RecreateTopic, Script: true},
	{Name: WaitDeleted, Script: true, Wait: true},
	{Name: Park, Script: true},
	{Name: WaitLastDeleted, Script: true, Wait: true},
}

// All returns every action, keyed ones first in the README's order.
func All() []Action { return append([]Action(nil), registry...) }

// Register adds an entry to the registry and returns what removes it. It
// is for tests: an action of their own shows that a new action is one
// entry (and its handler in the lab).
func Register(a Action) (remove func()) {
	registry = append(registry, a)
	return func() {
		for i, b := range registry {
			if b.Name == a.Name {
				registry = append(registry[:i:i], registry[i+1:]...)
				return
			}
		}
	}
}

// Lookup finds an action by name.
func Lookup(n Name) (Action, bool) {
	for _, a := range registry {
		if a.Name == n {
			return a, true
		}
	}
	return Action{}, false
}

// Of is the action named n; the zero Action if there is none.
func Of(n Name) Action {
	a, _ := Lookup(n)
	return a
}

// Item is one entry of the footer or of the ? view: one action, or a pair
// of actions that reads as one entry (+ and -, [ and ]) with a Line of its
// own. It is shown while any of its actions is enabled.
type Item struct {
	Actions []Name
	Line    *Line
}

// Short is the item's footer line.
func (i Item) Short() Line {
	if i.Line != nil {
		return *i.Line
	}
	a := Of(i.Actions[0])
	if a.Short != (Line{}) {
		return a.Short
	}
	return a.Help
}

// Full is the item's line in the ? view.
func (i Item) Full() Line {
	if i.Line != nil {
		return *i.Line
	}
	return Of(i.Actions[0]).Help
}

func one(n Name) Item { return Item{Actions: []Name{n}} }

var (
	scale  = Item{Actions: []Name{ScaleUp, ScaleDown}, Line: &Line{"+ -", "scale usage"}}
	scroll = Item{Actions: []Name{ScrollUp, ScrollDown}, Line: &Line{"[ ]", "scroll"}}
)

// partitions is t and P in the ? view: the partitions view, and adding one.
var partitions = Item{Actions: []Name{Partitions, AddPartitions}, Line: &Line{"t P", "partitions · add"}}

// Footer is the footer line's items, in order.
func Footer() []Item {
	return []Item{
		one(Up), one(Jump), one(Crash), one(Stop), one(Restart), one(Pause),
		one(Mode), one(Reset), one(CrashAt), one(ResetLab), one(Logs), one(Partitions),
		one(Scenarios), scroll, one(Help), one(Quit),
	}
}

// HelpColumns is the ? view's items, column by column. A keyed action of
// the lab's that no column places ends the last one.
func HelpColumns() [][]Item {
	cols := [][]Item{
		{one(Up), one(Down), one(Next), one(Jump), scale, partitions, one(Rebuild)},
		{one(Crash), one(Stop), one(Restart), one(Freeze), one(Pause), one(Acks), one(Why)},
		{one(Mode), one(Reset), one(CrashAt), one(ResetLab), one(InjectBad), one(Scenarios), one(Retention)},
		{one(Logs), scroll, one(Help), one(Close), one(Quit)},
	}
	placed := map[Name]bool{}
	for _, col := range cols {
		for _, it := range col {
			for _, n := range it.Actions {
				placed[n] = true
			}
		}
	}
	for _, a := range registry {
		if len(a.Keys) > 0 && a.ByLab() && !placed[a.Name] {
			cols[len(cols)-1] = append(cols[len(cols)-1], one(a.Name))
		}
	}
	return cols
}
