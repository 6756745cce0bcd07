package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/narration"
)

// narrate takes a scenario's progress. When a step asks the presenter for
// a key, the process it acts on is selected once, so the key alone does it.
func (m Model) narrate(p scenario.Progress) (tea.Model, tea.Cmd) {
	if m.starting != "" && p.Name != m.starting {
		return m, nil
	}
	m.starting = ""
	m.narration = &p
	if p.Press != nil && m.board.Has(p.Press.Process) {
		step := fmt.Sprintf("%s/%d", p.Name, p.Step)
		if m.narratedStep != step {
			m.narratedStep, m.offScript = step, ""
			m.selected = p.Press.Process
			return m.followLogs()
		}
	}
	return m, nil
}

// noteOffScript: while a step waits for the presenter's key, an action key
// other than that one (or on another process) still acts, and the
// narration says it was not the step's. Only a key that acts on the
// selected process needs that process selected; the others (producer,
// consumer-usage) are the step's whatever is selected.
func (m *Model) noteOffScript(msg tea.KeyMsg) {
	if !m.running() || m.narration.Press == nil {
		return
	}
	name, ok := m.keys.Action(msg)
	a := action.Of(name)
	if !ok || !a.OffScript || !m.keys.Enabled(name) {
		return
	}
	press := m.narration.Press
	if name == press.Action && (a.Target != action.TargetSelected || m.selected == press.Process) {
		m.offScript = ""
		return
	}
	on := ""
	if a.Target == action.TargetSelected {
		on = " on " + m.selected
	}
	m.offScript = fmt.Sprintf("%s%s is not this step's key (it still acted)", msg.String(), on)
}

// running reports whether a scenario is in progress.
func (m Model) running() bool { return m.narration != nil && !m.narration.Done }

// pickerEntries: the running scenario can be stopped from the top entry.
func (m Model) pickerEntries() []narration.Entry {
	var out []narration.Entry
	if m.running() {
		out = append(out, narration.Entry{Stop: true, Title: "■ stop the running scenario (" + m.narration.Name + ")"})
	}
	for _, s := range m.catalog {
		out = append(out, narration.Entry{Name: s.Name, Title: s.Title, Summary: s.Described(), Article: s.Article})
	}
	return out
}

// pickerKey handles keys while the picker is open: it takes them all but
// quit.
func (m Model) pickerKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	name, ok := m.keys.Action(msg)
	if ok && !m.keys.Enabled(name) {
		name = ""
	}
	entries := m.pickerEntries()
	switch {
	case name == action.Quit:
		return m, tea.Quit
	case name == action.Close || name == action.Scenarios:
		m.overlay.close(pickerPanel)
	case name == action.Up || name == action.Prev:
		if len(entries) > 0 {
			m.pickCursor = (m.pickCursor - 1 + len(entries)) % len(entries)
		}
	case name == action.Down || name == action.Next:
		if len(entries) > 0 {
			m.pickCursor = (m.pickCursor + 1) % len(entries)
		}
	case msg.Type == tea.KeyEnter:
		if m.pickCursor < 0 || m.pickCursor >= len(entries) {
			return m, nil
		}
		m.overlay.close(pickerPanel)
		e := entries[m.pickCursor]
		host := m.opts.Scenarios
		if e.Stop {
			m.setStatus(board.LevelAction, "stopping scenario "+m.narration.Name+"…")
			return m, func() tea.Msg { host.Stop(); return scenarioResultMsg{} }
		}
		name := e.Name
		m.narration = &scenario.Progress{Name: name, Title: e.Title, Waiting: "starting", Say: e.Article}
		m.starting = name
		m.setStatus(board.LevelAction, "starting scenario "+name+"…")
		return m, func() tea.Msg { return scenarioResultMsg{Name: name, Err: host.Start(name)} }
	}
	return m, nil
}

// scenarioResultMsg is the answer of ScenarioHost.Start (Name the scenario)
// or Stop (Name "").
type scenarioResultMsg struct {
	Name string
	Err  error
}

// scenarioResult shows the answer of Start or Stop.
func (m Model) scenarioResult(r scenarioResultMsg) Model {
	switch {
	case r.Err != nil:
		m.starting = ""
		m.setStatus(board.LevelBad, "scenario: "+r.Err.Error())
		if m.narration != nil && !m.narration.Done && m.narration.Step == 0 {
			m.narration = nil
		}
	case r.Name == "":
		m.setStatus(board.LevelGood, "scenario stopped")
	default:
		m.setStatus(board.LevelGood, "scenario "+r.Name+" started: follow the narration panel (g: scenarios)")
	}
	return m
}

// Narration panel heights (box included in the full layout): what the
// panel needs to show a step, below which the sensors and usage give way.
const (
	narrationFull    = 8
	narrationCompact = 6
)

func (m Model) narrationView(w, h int, full bool) string {
	p := m.narrationPanel()
	bw, bh := narrationBody(w, h, full)
	title := m.styles.Title.Render(p.Title())
	if hint := p.ScrollHint(bw, bh, false); hint != "" {
		if lipgloss.Width(title+" · "+hint) > bw-4 {
			hint = p.ScrollHint(bw, bh, true)
		}
		// The title gives way to the hint: a cut hint would hide that
		// there is more.
		hint = m.styles.Muted.Render(" · " + hint)
		room := bw - lipgloss.Width(hint)
		if full {
			room -= 4 // the box's corners and the title's padding
		}
		title = ansi.Truncate(title, max(room, 0), "…") + hint
	}
	if full {
		return common.Box(m.styles, title, common.Lines(p.View(bw, bh)), w, h)
	}
	return common.Section(title, common.Lines(p.View(bw, bh)), w, h)
}

func (m Model) pickerView(w, h int, full bool) string {
	p := narration.Picker{Styles: m.styles, Entries: m.pickerEntries(), Cursor: m.pickCursor}
	if full {
		return common.Box(m.styles, m.styles.Title.Render(p.Title()), common.Lines(p.View(w-2, h-2)), w, h)
	}
	return common.Section(m.styles.Title.Render(p.Title()), common.Lines(p.View(w, h-1)), w, h)
}
