package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// keyHandler does what an action's key asks.
type keyHandler func(Model, tea.KeyMsg) (tea.Model, tea.Cmd)

// keyHandlers is the UI's own handler of a keyed action: the view's
// actions (selection, overlays, quit), and the lab's whose key checks the
// viewer's board or words its status line first. Any other keyed action
// of the lab needs no entry: its key is a call on its target (askKey).
// TestEveryKeyHasAHandler keeps the registry and the keys in step.
var keyHandlers = map[action.Name]keyHandler{
	action.Up:            selecting(-1),
	action.Prev:          selecting(-1),
	action.Down:          selecting(+1),
	action.Next:          selecting(+1),
	action.Jump:          func(m Model, msg tea.KeyMsg) (tea.Model, tea.Cmd) { return m.jump(msg.String()) },
	action.Crash:         lifecycleKey(action.Crash),
	action.Stop:          lifecycleKey(action.Stop),
	action.Restart:       lifecycleKey(action.Restart),
	action.Freeze:        plain(Model.freeze),
	action.Pause:         plain(Model.pause),
	action.Mode:          func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.usageSwitch(action.Mode) },
	action.Reset:         func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.usageSwitch(action.Reset) },
	action.CrashAt:       plain(Model.armCrash),
	action.ResetLab:      plain(Model.resetLab),
	action.InjectBad:     plain(Model.injectBad),
	action.Rebuild:       plain(Model.cycleRebuild),
	action.ScaleUp:       func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scale(action.ScaleUp, +1) },
	action.ScaleDown:     func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scale(action.ScaleDown, -1) },
	action.Logs:          plain(Model.toggleLogs),
	action.Partitions:    plain(Model.togglePartitions),
	action.Why:           plain(Model.cycleWhy),
	action.Scenarios:     plain(Model.openPicker),
	action.ScrollUp:      func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scrollBy(true), nil },
	action.ScrollDown:    func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scrollBy(false), nil },
	action.Help:          plain(Model.toggleHelp),
	action.Close:         plain(Model.closeOverlays),
	action.Quit:          func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m, tea.Quit },
	action.Acks:          plain(Model.toggleAcks),
	action.AddPartitions: plain(Model.addPartition),
	action.Retention:     plain(Model.setRetention),
}

// handlerOf is the key's handler: its own, or the call on its target for
// an action the lab carries out.
func handlerOf(name action.Name) (keyHandler, bool) {
	if h, ok := keyHandlers[name]; ok {
		return h, true
	}
	if a := action.Of(name); a.ByLab() && len(a.Keys) > 0 {
		return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.askKey(name) }, true
	}
	return nil, false
}

// plain is a handler that does not read the key.
func plain(f func(Model) (tea.Model, tea.Cmd)) keyHandler {
	return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return f(m) }
}

func selecting(delta int) keyHandler {
	return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.selectBy(delta) }
}

func lifecycleKey(op action.Name) keyHandler {
	return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.lifecycle(op) }
}

func (m Model) toggleHelp() (tea.Model, tea.Cmd) {
	m.overlay.help = !m.overlay.help
	return m, nil
}

// closeOverlays closes help, logs and partitions; a finished scenario's
// panel gives the events back.
func (m Model) closeOverlays() (tea.Model, tea.Cmd) {
	if !m.overlay.help && !m.overlay.is(logsPanel) && m.narration != nil && m.narration.Done {
		m.narration = nil
	}
	m.overlay.help = false
	for _, p := range []panel{logsPanel, partitionsPanel, whyPanel} {
		m.overlay.close(p)
	}
	return m, nil
}

func (m Model) toggleLogs() (tea.Model, tea.Cmd) {
	if m.overlay.toggle(logsPanel) {
		return m.openLogs()
	}
	return m, nil
}

func (m Model) togglePartitions() (tea.Model, tea.Cmd) {
	m.overlay.toggle(partitionsPanel)
	return m, nil
}

// cycleWhy opens the w view on the total, then moves it to each sensor
// whose drift has causes, then closes it.
func (m Model) cycleWhy() (tea.Model, tea.Cmd) {
	if !m.overlay.is(whyPanel) {
		m.overlay.open(whyPanel)
		m.whySensor = ""
		return m, nil
	}
	for _, id := range m.board.DriftingSensors() {
		if id > m.whySensor {
			m.whySensor = id
			return m, nil
		}
	}
	m.overlay.close(whyPanel)
	m.whySensor = ""
	return m, nil
}

// openPicker opens the scenario picker, or says why there is none.
func (m Model) openPicker() (tea.Model, tea.Cmd) {
	if !m.keys.Enabled(action.Scenarios) {
		m.setStatus(board.LevelInfo, "scenarios are not available in this build (g is reserved for them)")
		return m, nil
	}
	m.overlay = overlays{panel: pickerPanel}
	m.pickCursor = 0
	if m.board.UsageCmd() != "" {
		// The lab runs the user's consumer-usage: what they came for is
		// its grade.
		for i, e := range m.pickerEntries() {
			if e.Name == scenario.Grade {
				m.pickCursor = i
			}
		}
	}
	return m, nil
}
