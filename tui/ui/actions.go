package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// keyHandler does what an action's key asks.
type keyHandler func(Model, tea.KeyMsg) (tea.Model, tea.Cmd)

// keyHandlers is the UI's handler of every keyed action of the registry
// (TestEveryKeyHasAHandler keeps the two in step).
var keyHandlers = map[action.Name]keyHandler{
	action.Up:      selecting(-1),
	action.Prev:    selecting(-1),
	action.Down:    selecting(+1),
	action.Next:    selecting(+1),
	action.Jump:    func(m Model, msg tea.KeyMsg) (tea.Model, tea.Cmd) { return m.jump(msg.String()) },
	action.Crash:   lifecycleKey(board.OpCrash),
	action.Stop:    lifecycleKey(board.OpStop),
	action.Restart: lifecycleKey(board.OpRestart),
	action.Freeze:  plain(Model.freeze),
	action.Pause:   plain(Model.pause),
	action.Mode:    func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.usageSwitch(OpMode, m.ctl.ToggleUsageMode) },
	action.Reset: func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) {
		return m.usageSwitch(OpReset, m.ctl.ToggleUsageReset)
	},
	action.CrashAt:    plain(Model.armCrash),
	action.ResetLab:   plain(Model.resetLab),
	action.InjectBad:  plain(Model.injectBad),
	action.Rebuild:    plain(Model.cycleRebuild),
	action.ScaleUp:    func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scale(+1) },
	action.ScaleDown:  func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scale(-1) },
	action.Logs:       plain(Model.toggleLogs),
	action.Partitions: plain(Model.togglePartitions),
	action.Why:        plain(Model.cycleWhy),
	action.Scenarios:  plain(Model.openPicker),
	action.ScrollUp:   func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scrollBy(true), nil },
	action.ScrollDown: func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.scrollBy(false), nil },
	action.Help:       plain(Model.toggleHelp),
	action.Close:      plain(Model.closeOverlays),
	action.Quit:       func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m, tea.Quit },
	action.Acks:       plain(Model.toggleAcks),

	action.AddPartitions: plain(Model.addPartition),
}

// plain is a handler that does not read the key.
func plain(f func(Model) (tea.Model, tea.Cmd)) keyHandler {
	return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return f(m) }
}

func selecting(delta int) keyHandler {
	return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.selectBy(delta) }
}

func lifecycleKey(op string) keyHandler {
	return func(m Model, _ tea.KeyMsg) (tea.Model, tea.Cmd) { return m.lifecycle(op) }
}

func (m Model) toggleHelp() (tea.Model, tea.Cmd) {
	m.showHelp = !m.showHelp
	return m, nil
}

// closeOverlays closes help, logs and partitions; a finished scenario's
// panel gives the events back.
func (m Model) closeOverlays() (tea.Model, tea.Cmd) {
	if !m.showHelp && !m.showLogs && m.narration != nil && m.narration.Done {
		m.narration = nil
	}
	m.showHelp, m.showLogs, m.showPartitions, m.showWhy = false, false, false, false
	return m, nil
}

func (m Model) toggleLogs() (tea.Model, tea.Cmd) {
	m.showLogs = !m.showLogs
	if m.showLogs {
		m.showPartitions, m.showWhy = false, false
		return m.openLogs()
	}
	return m, nil
}

func (m Model) togglePartitions() (tea.Model, tea.Cmd) {
	m.showPartitions = !m.showPartitions
	if m.showPartitions {
		m.showLogs, m.showWhy = false, false
	}
	return m, nil
}

// cycleWhy opens the w view on the total, then moves it to each sensor
// whose drift has causes, then closes it.
func (m Model) cycleWhy() (tea.Model, tea.Cmd) {
	if !m.showWhy {
		m.showWhy, m.whySensor, m.showLogs, m.showPartitions = true, "", false, false
		return m, nil
	}
	for _, id := range m.board.DriftingSensors() {
		if id > m.whySensor {
			m.whySensor = id
			return m, nil
		}
	}
	m.showWhy, m.whySensor = false, ""
	return m, nil
}

// openPicker opens the scenario picker, or says why there is none.
func (m Model) openPicker() (tea.Model, tea.Cmd) {
	if !m.keys.Enabled(action.Scenarios) {
		m.setStatus(board.LevelInfo, "scenarios are not available in this build (g is reserved for them)")
		return m, nil
	}
	m.picking, m.pickCursor, m.showHelp, m.showLogs, m.showPartitions, m.showWhy = true, 0, false, false, false, false
	return m, nil
}

// resetLab handles R: a new baseline for consumer-usage.
func (m Model) resetLab() (tea.Model, tea.Cmd) {
	m.setStatus(board.LevelAction, "R: new baseline: stopping consumer-usage, clearing usage records and checkpoints…")
	return m, call(OpResetLab, board.Usage, "", m.ctl.ResetLab)
}
