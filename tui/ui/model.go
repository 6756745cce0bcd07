// Package ui is the dashboard's bubbletea model. It wraps a board.Board:
// the lab's inputs arrive as Inputs (Forward gathers them from
// lab.Inputs) and go into the board, or into the narration panel for a
// scenario's progress; keys become Controller calls run as tea.Cmds; the
// view is a pure function of the board and a little UI state (selection,
// overlays, the last action's result). Update takes nothing else.
//
//	l, _ := lab.New(cfg)
//	p := tea.NewProgram(ui.New(l.NewBoard(), l, ui.Options{}), tea.WithAltScreen())
//	go ui.Forward(l.Inputs(), p.Send, ui.Frame)
//
// A front end sharing one board among several models (serve's hub)
// applies each Inputs itself and hands every model BoardChanged instead.
// After p.Run returns the board is the caller's again.
package ui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Minimum terminal size the layout supports.
const (
	MinWidth  = 80
	MinHeight = 24
)

// Options tune the model.
type Options struct {
	// LogEvery is how often the open log overlay is refreshed (default 1 s
	// of the board's clock, which board.Tick inputs move).
	LogEvery time.Duration
	// LogLines is how many lines the log overlay asks Controller.Tail for
	// (default 200).
	LogLines int
	// ArmAfter is how long c waits for another c before it arms the point
	// chosen (default DefaultArmAfter).
	ArmAfter time.Duration
	// Scenarios, when set, enables the g key (the scenario picker) and the
	// narration panel; without it g only says scenarios are not available.
	Scenarios ScenarioHost

	// Renderer, when set, is the renderer every style of the model comes
	// from (theme.New): a session's colour profile and background (one
	// per SSH session, e.g. from wish's bubbletea.MakeRenderer) instead of
	// lipgloss's default renderer, which is the process's own terminal.
	Renderer *lipgloss.Renderer

	// ReadOnly makes the model a watch-only view of someone else's lab:
	// every key but Help (?), Close (esc) and Quit (q, ctrl+c) is refused
	// (typed together or pasted too): no Controller call, no selection
	// change, no scenario picker, and the status line says ReadOnlyNote.
	ReadOnly bool
	// ReadOnlyNote is what the status line says in a read-only view
	// (default DefaultReadOnlyNote).
	ReadOnlyNote string

	// Banner, when set, is shown in the header after the product name
	// ("lab 3f2a9c01", "presenter's lab · read-only"), cut to what the
	// width leaves it: the header stays one line.
	Banner string
}

// DefaultReadOnlyNote is the status line of a read-only view without
// Options.ReadOnlyNote.
const DefaultReadOnlyNote = "read-only view of the presenter's lab: only ? (help), t (partitions), w (why) and q (quit) work here"

// Model is the dashboard's tea.Model.
type Model struct {
	board  *board.Board
	ctl    Controller
	opts   Options
	styles *theme.Styles
	keys   KeyMap

	width, height int
	// sizeNote says the window is larger than the model draws (size.go).
	sizeNote string
	selected string
	showHelp bool
	showLogs bool
	// showPartitions: the t view, the topic's partitions in full in place
	// of the sensors and usage.
	showPartitions bool
	// showWhy: the w view in the same place, for whySensor ("" the total).
	showWhy    bool
	whySensor  string
	logName    string
	logLines   []string
	logFetched bool
	// logAsked is the board's time when the open log overlay last asked
	// for its lines.
	logAsked time.Time

	status      string
	statusLevel board.Level

	// Guided scenarios: the catalog, the picker and the latest narration.
	catalog    []scenario.Scenario
	picking    bool
	pickCursor int
	narration  *scenario.Progress
	// narratedStep is the step whose process was selected for the presenter.
	narratedStep string
	// starting: the scenario just started from the picker; reports of the
	// one it replaced (its end) are not shown over it.
	starting string
	// offScript notes an action key the current step did not ask for.
	offScript string
	// statusArm: the crash point the status line says is armed, followed
	// on the board until it fires or stops being armed.
	statusArm armWatch
	// crashBeforeArm is the latest crash point hit the board knew of when c
	// was pressed: a hit is this arm's firing only if it is newer.
	crashBeforeArm *board.CrashPointHit
	// choice: the crash point c is choosing, armed once c rests (crashpoint.go).
	choice crashChoice

	// scroll: the narration's or the log view's scrolling (scroll.go).
	scroll scrollState
	// confirm: a key's question waiting for y (confirm.go).
	confirm *confirmation
}

// New returns the model. The board is owned by the model from now on: feed
// it only through the program (Inputs).
func New(b *board.Board, ctl Controller, opts Options) Model {
	if opts.LogLines <= 0 {
		opts.LogLines = 200
	}
	if opts.ArmAfter <= 0 {
		opts.ArmAfter = DefaultArmAfter
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = time.Second
	}
	opts.Banner = oneLine(opts.Banner)
	opts.ReadOnlyNote = oneLine(opts.ReadOnlyNote)
	if opts.ReadOnlyNote == "" {
		opts.ReadOnlyNote = DefaultReadOnlyNote
	}
	keys := DefaultKeyMap().withJumpRows(highestJumpKey(b))
	if opts.ReadOnly {
		keys = keys.readOnly()
	}
	m := Model{board: b, ctl: ctl, opts: opts, styles: theme.New(opts.Renderer), keys: keys}
	if opts.Scenarios != nil && !opts.ReadOnly {
		m.keys = m.keys.WithEnabled(true, action.Scenarios)
		m.catalog = opts.Scenarios.Catalog()
	}
	if names := b.Names(); len(names) > 0 {
		m.selected = names[0]
	}
	return m
}

// highestJumpKey is the highest jump key among the board's rows.
func highestJumpKey(b *board.Board) int {
	n := 0
	for _, p := range b.Processes() {
		n = max(n, p.Key)
	}
	return n
}

// oneLine makes text fit for a single screen line: no escape sequences
// (a banner may carry a remote user's name), control characters as spaces.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return ' '
		}
		return r
	}, ansi.Strip(s)))
}

// Board returns the board (for a caller that needs Report after the
// program ended).
func (m Model) Board() *board.Board { return m.board }

// Selected is the name of the selected process.
func (m Model) Selected() string { return m.selected }

// Init has nothing to start: the open log overlay is refreshed on the
// board's clock (refreshLogs), so no timer of the model's own wakes the
// program (each message costs a frame) while it is closed.
func (m Model) Init() tea.Cmd { return nil }

// refreshLogs asks for the open log overlay's lines again once LogEvery of
// the board's time has passed since it last asked.
func (m *Model) refreshLogs() tea.Cmd {
	if !m.showLogs || m.board.Now().Sub(m.logAsked) < m.opts.LogEvery {
		return nil
	}
	m.logAsked = m.board.Now()
	return tail(m.ctl, m.logName, m.opts.LogLines)
}

// Update is the state transition: no I/O here, only board updates and
// Cmds, from the lab's Inputs and the model's own messages.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.sizeNote = boundSize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			return m.keys1by1(msg.Runes)
		}
		return m.key(msg)
	case tea.MouseMsg:
		return m, nil // no mouse actions (and none in a read-only view)
	case ActionResultMsg:
		return m.result(msg), nil
	case crashChoiceDue:
		return m.armChosen(msg)
	case LogTailMsg:
		if msg.Name == m.logName {
			m.logLines, m.logFetched = msg.Lines, true
		}
		return m, nil
	case Inputs:
		return m.take(msg, false)
	case BoardChanged:
		return m.take(msg.Inputs, true)
	}
	return m, nil // not the lab's and not the model's own: ignored
}

// keepSelection moves the selection off a row the board removed (an
// instance scaled away) to consumer-usage.
func (m *Model) keepSelection() {
	if m.selected == "" || m.board.Has(m.selected) {
		return
	}
	m.selected = board.Usage
	if !m.board.Has(board.Usage) {
		if names := m.board.Names(); len(names) > 0 {
			m.selected = names[0]
		}
	}
}

// scale handles + and -: one consumer-usage instance more or less (1–3).
func (m Model) scale(delta int) (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Usage) {
		m.setStatus(board.LevelWarn, "no consumer-usage in this run")
		return m, nil
	}
	have := len(m.board.UsageInstances())
	n := have + delta
	if n < 1 || n > board.MaxUsageInstances {
		m.setStatus(board.LevelWarn, fmt.Sprintf("consumer-usage runs %d instance(s): scale goes from 1 to %d (+ adds, - removes)", have, board.MaxUsageInstances))
		return m, nil
	}
	m.setStatus(board.LevelAction, fmt.Sprintf("scaling consumer-usage to %d instance(s)…", n))
	ctl := m.ctl
	return m, func() tea.Msg {
		return ActionResultMsg{Op: OpScale, Name: board.Usage, Value: fmt.Sprint(n), Err: ctl.Scale(n)}
	}
}

// armWatch is a crash point the status line says is armed.
type armWatch struct {
	point string // "" when the status line says nothing of an arm
	// before is the latest hit known when the arm was asked for.
	before *board.CrashPointHit
	// seen: the board has shown the point armed. The controller's answer
	// can come before the board hears the process announce the arm.
	seen bool
}

// statusFollowsArm: a status line that says a crash point is armed stops
// saying so once the board no longer shows it armed: it fired (a hit newer
// than the one known when the arm was asked for, never an earlier crash's),
// was disarmed, or its process ended.
func (m *Model) statusFollowsArm() {
	w := &m.statusArm
	if w.point == "" {
		return
	}
	pv := m.board.Process(board.Usage)
	if hit := pv.LastCrashPoint; hit != nil && hit.Point == w.point && (w.before == nil || hit.At.After(w.before.At)) {
		m.setStatus(board.LevelBad, fmt.Sprintf("crash point %s fired at partition %d offset %d: consumer-usage SIGKILLed itself (r restarts it)",
			hit.Point, hit.Partition, hit.Offset))
		return
	}
	switch {
	case pv.Armed == w.point:
		w.seen = true
	case w.seen || !pv.Alive:
		m.setStatus(board.LevelInfo, "crash point "+w.point+" is no longer armed")
	}
}

// keys1by1 handles keys typed faster than the terminal is read (tmux
// send-keys, a presenter's quick "3x"): bubbletea delivers them as one
// multi-rune message, which must act like the keys in turn.
func (m Model) keys1by1(runes []rune) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	var next tea.Model = m
	for _, r := range runes {
		var cmd tea.Cmd
		next, cmd = next.(Model).key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		cmds = append(cmds, cmd)
	}
	return next, tea.Sequence(cmds...)
}

// key does what the key's action asks (keyHandlers), or refuses it in a
// read-only view.
func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	name, ok := m.keys.Action(msg)
	if m.opts.ReadOnly && (msg.Paste || !ok || !m.keys.Enabled(name)) {
		m.setStatus(board.LevelWarn, m.opts.ReadOnlyNote)
		return m, nil
	}
	if m.confirm != nil {
		return m.answer(msg)
	}
	if m.picking {
		return m.pickerKey(msg)
	}
	m.noteOffScript(msg)
	// An optional action that is off still answers: its handler says why.
	if !ok || (!m.keys.Enabled(name) && !action.Of(name).Optional) {
		return m, nil
	}
	return keyHandlers[name](m, msg)
}

func (m Model) selectBy(delta int) (tea.Model, tea.Cmd) {
	names := m.board.Names()
	if len(names) == 0 {
		return m, nil
	}
	i := 0
	for j, n := range names {
		if n == m.selected {
			i = j
		}
	}
	m.selected = names[(i+delta+len(names))%len(names)]
	return m.followLogs()
}

func (m Model) jump(digit string) (tea.Model, tea.Cmd) {
	i := int(digit[0] - '1')
	if i < 0 || i >= len(board.Canonical) {
		return m, nil
	}
	name := board.Canonical[i]
	if !m.board.Has(name) {
		m.setStatus(board.LevelWarn, fmt.Sprintf("%s: %s is not supervised here (not embedded in this run)", digit, name))
		return m, nil
	}
	m.selected = name
	return m.followLogs()
}

// followLogs re-targets the log overlay when the selection moves.
func (m Model) followLogs() (tea.Model, tea.Cmd) {
	if m.showLogs && m.logName != m.selected {
		return m.openLogs()
	}
	return m, nil
}

func (m Model) openLogs() (tea.Model, tea.Cmd) {
	m.logName, m.logLines, m.logFetched, m.logAsked = m.selected, nil, false, m.board.Now()
	return m, tail(m.ctl, m.logName, m.opts.LogLines)
}

// lifecycle handles x, s and r on the selected process. The board shows the
// request at once ("crashing…"), before the supervisor confirms it.
func (m Model) lifecycle(op string) (tea.Model, tea.Cmd) {
	name := m.selected
	if name == "" {
		return m, nil
	}
	pv := m.board.Process(name)
	if op == board.OpRestart && !pv.Alive {
		op = board.OpStart
	}
	if (op == board.OpCrash || op == board.OpStop) && !pv.Alive {
		m.setStatus(board.LevelWarn, fmt.Sprintf("%s is not running (%s): r starts it", name, pv.StateLabel))
		return m, nil
	}
	var f func() error
	switch op {
	case board.OpCrash:
		f = func() error { return m.ctl.Crash(name) }
		m.setStatus(board.LevelAction, fmt.Sprintf("crash %s: SIGKILL to pid %d and its group…", name, pv.PID))
	case board.OpStop:
		f = func() error { return m.ctl.Stop(name) }
		m.setStatus(board.LevelAction, fmt.Sprintf("stop %s: SIGTERM to pid %d…", name, pv.PID))
	case board.OpRestart:
		f = func() error { return m.ctl.Restart(name) }
		m.setStatus(board.LevelAction, fmt.Sprintf("restart %s…", name))
	case board.OpStart:
		f = func() error { return m.ctl.Start(name) }
		m.setStatus(board.LevelAction, fmt.Sprintf("start %s…", name))
	}
	return m, call(op, name, "", f)
}

// freeze handles z: SIGSTOP the selected process's group, or SIGCONT it
// when it is frozen.
func (m Model) freeze() (tea.Model, tea.Cmd) {
	name := m.selected
	if name == "" {
		return m, nil
	}
	pv := m.board.Process(name)
	if !pv.Alive {
		m.setStatus(board.LevelWarn, fmt.Sprintf("z: %s is not running (%s), nothing to freeze", name, pv.StateLabel))
		return m, nil
	}
	if pv.Frozen {
		m.setStatus(board.LevelAction, fmt.Sprintf("thaw %s: SIGCONT to pid %d and its group…", name, pv.PID))
	} else {
		m.setStatus(board.LevelAction, fmt.Sprintf("freeze %s: SIGSTOP to pid %d and its group…", name, pv.PID))
	}
	ctl := m.ctl
	return m, func() tea.Msg {
		frozen, err := ctl.ToggleFreeze(name)
		value := "thawed"
		if frozen {
			value = "frozen"
		}
		return ActionResultMsg{Op: OpFreeze, Name: name, Value: value, Err: err}
	}
}

func (m Model) pause() (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Producer) {
		m.setStatus(board.LevelWarn, "p: no producer in this run")
		return m, nil
	}
	verb := "pause"
	if m.board.Process(board.Producer).Producer.PausedOrPausing() {
		verb = "resume"
	}
	m.setStatus(board.LevelAction, verb+" producer…")
	ctl := m.ctl
	return m, func() tea.Msg {
		paused, err := ctl.TogglePause()
		verb := "resume"
		if paused {
			verb = "pause"
		}
		return ActionResultMsg{Op: OpPause, Name: board.Producer, Value: verb, Err: err}
	}
}

// toggleAcks handles a: the producer's acks, all ↔ 1. A running producer
// flushes what is in flight and runs a new producer with the other setting.
func (m Model) toggleAcks() (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Producer) {
		m.setStatus(board.LevelWarn, "a: no producer in this run")
		return m, nil
	}
	next := lesson.Acks(m.board.AcksSetting()).Other()
	m.setStatus(board.LevelAction, "producer: switching to acks="+string(next)+"…")
	ctl := m.ctl
	return m, func() tea.Msg {
		v, err := ctl.ToggleAcks()
		return ActionResultMsg{Op: OpAcks, Name: board.Producer, Value: v, Err: err}
	}
}

// usageSwitch handles m and e: how consumer-usage runs from its next start.
// The lab restarts a running consumer-usage at once and leaves a stopped
// or crashed one stopped.
func (m Model) usageSwitch(op string, toggle func() (string, bool, error)) (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Usage) {
		m.setStatus(board.LevelWarn, "no consumer-usage in this run")
		return m, nil
	}
	m.setStatus(board.LevelAction, "consumer-usage: switching its "+op+"…")
	return m, func() tea.Msg {
		value, restarted, err := toggle()
		return ActionResultMsg{Op: op, Name: board.Usage, Value: value, Restarted: restarted, Err: err}
	}
}

// cycleRebuild handles B: consumer-current's rebuild strategy moves one
// step along replay → snapshot → changelog → replay, from its next start.
func (m Model) cycleRebuild() (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Current) {
		m.setStatus(board.LevelWarn, "B: no consumer-current in this run")
		return m, nil
	}
	m.setStatus(board.LevelAction, "B: switching consumer-current's rebuild strategy…")
	ctl := m.ctl
	return m, func() tea.Msg {
		s, err := ctl.CycleRebuild()
		return ActionResultMsg{Op: OpRebuild, Name: board.Current, Value: s, Err: err}
	}
}

// rebuildResult is what the status line says of a switch of strategy.
func rebuildResult(strategy string, running bool) string {
	if !running {
		return "consumer-current will rebuild by " + strategy + " at its next start (r starts it)"
	}
	switch strategy {
	case "snapshot":
		return "consumer-current wrote a snapshot and keeps one; its next start loads it (x then r, or r)"
	case "changelog":
		return "consumer-current published its changelog and keeps it up; its next start reads it (x then r, or r)"
	}
	return "consumer-current's next start replays the topic from earliest"
}

// injectBad handles b: the producer publishes one malformed record of
// every kind (InjectBad(0)).
func (m Model) injectBad() (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Producer) || !m.board.Process(board.Producer).Alive {
		m.setStatus(board.LevelWarn, "b: the producer is not running, nothing can inject bad records")
		return m, nil
	}
	m.setStatus(board.LevelAction, "b: the producer publishes one malformed record of every kind…")
	ctl := m.ctl
	return m, func() tea.Msg {
		n, err := ctl.InjectBad(0)
		return ActionResultMsg{Op: OpInjectBad, Name: board.Producer, Value: fmt.Sprint(n), Err: err}
	}
}

// doneWords says what an action that succeeded did, for the status line
// (the actions whose answer needs more than words are result's cases).
var doneWords = map[string]func(m Model, r ActionResultMsg) string{
	board.OpCrash: func(_ Model, r ActionResultMsg) string {
		return r.Name + " was SIGKILLed: it stays down until r restarts it"
	},
	board.OpStop:    func(_ Model, r ActionResultMsg) string { return r.Name + " stopped gracefully" },
	board.OpStart:   func(_ Model, r ActionResultMsg) string { return r.Name + " started" },
	board.OpRestart: func(_ Model, r ActionResultMsg) string { return r.Name + " restarted" },
	OpPause:         func(_ Model, r ActionResultMsg) string { return "producer: " + r.Value + " sent" },
	OpResetLab: func(Model, ActionResultMsg) string {
		return "new baseline: consumer-usage reads on from the end of the topic, usage counts from 0"
	},
	OpScale: func(_ Model, r ActionResultMsg) string {
		return "consumer-usage runs " + r.Value + " instance(s) in one group: the events show the rebalance"
	},
	OpInjectBad: func(_ Model, r ActionResultMsg) string {
		return "producer published " + r.Value + " malformed records: the consumers skip them, consumer-usage forwards them to the DLQ"
	},
	OpRebuild: func(m Model, r ActionResultMsg) string {
		return rebuildResult(r.Value, m.board.Process(board.Current).Alive)
	},
	OpAcks: func(_ Model, r ActionResultMsg) string {
		return "producer: " + lesson.Acks(r.Value).Gist() + " (the events say more)"
	},
	OpAddPartitions: func(_ Model, r ActionResultMsg) string {
		return r.Name + " has " + r.Value + " partitions: producer and consumers use them within about a second; the events name the moved keys"
	},
}

// result shows a Controller answer and tells the board.
func (m Model) result(r ActionResultMsg) Model {
	if r.Op == OpScenario {
		return m.scenarioResult(r)
	}
	if r.Err != nil {
		m.setStatus(board.LevelBad, fmt.Sprintf("%s %s failed: %v", r.Op, r.Name, r.Err))
		return m
	}
	if words, ok := doneWords[r.Op]; ok {
		m.setStatus(board.LevelGood, words(m, r))
		return m
	}
	switch r.Op {
	case OpFreeze:
		if r.Value == "frozen" {
			m.setStatus(board.LevelWarn, r.Name+" frozen (SIGSTOP): it holds its sockets and does nothing; z thaws it")
		} else {
			m.setStatus(board.LevelGood, r.Name+" thawed (SIGCONT): it carries on by itself")
		}
	case OpMode, OpReset:
		what := "mode " + r.Value
		if r.Op == OpReset {
			what = "reset " + r.Value
		}
		if r.Restarted {
			m.setStatus(board.LevelGood, "consumer-usage restarted with "+what)
		} else {
			m.setStatus(board.LevelGood, "consumer-usage will start with "+what+" (it is not running: r starts it)")
		}
	case OpArm:
		if r.Value == string(lesson.NoCrashPoint) {
			m.setStatus(board.LevelGood, "crash point disarmed on consumer-usage (c arms after-delta)")
		} else {
			m.setStatus(board.LevelGood, "crash point "+r.Value+" armed: consumer-usage SIGKILLs itself at the next message that reaches it (c: next point)")
			m.statusArm = armWatch{point: r.Value, before: m.crashBeforeArm}
			m.statusFollowsArm() // it may have fired before the answer came back
		}
	}
	return m
}

func (m *Model) setStatus(level board.Level, text string) {
	m.status, m.statusLevel, m.statusArm = text, level, armWatch{}
}
