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
	// overlay: the help and the one panel open in the board's place (the
	// logs, t: the partitions in full, w: why, g: the picker).
	overlay overlays
	// whySensor is the sensor the w view shows ("" the total).
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
	if !m.overlay.is(logsPanel) || m.board.Now().Sub(m.logAsked) < m.opts.LogEvery {
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
	case scenarioResultMsg:
		return m.scenarioResult(msg), nil
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
	if m.overlay.is(pickerPanel) {
		return m.pickerKey(msg)
	}
	m.noteOffScript(msg)
	// An optional action that is off still answers: its handler says why.
	if !ok || (!m.keys.Enabled(name) && !action.Of(name).Optional) {
		return m, nil
	}
	h, ok := handlerOf(name)
	if !ok {
		return m, nil // a keyed action nothing handles: TestEveryKeyHasAHandler
	}
	return h(m, msg)
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
	if m.overlay.is(logsPanel) && m.logName != m.selected {
		return m.openLogs()
	}
	return m, nil
}

func (m Model) openLogs() (tea.Model, tea.Cmd) {
	m.logName, m.logLines, m.logFetched, m.logAsked = m.selected, nil, false, m.board.Now()
	return m, tail(m.ctl, m.logName, m.opts.LogLines)
}
