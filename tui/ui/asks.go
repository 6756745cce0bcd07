package ui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// The keys that ask the lab for an action: what the viewer's board allows,
// what the status line says while the lab acts, and the call (ask). The
// lab decides a toggle from its own state: a key's call names no value.

// ask is the Cmd that carries out c: the lab's answer comes back as an
// ActionResultMsg.
func (m Model) ask(c action.Call) tea.Cmd {
	ctl := m.ctl
	return func() tea.Msg { return ctl.Do(context.Background(), c) }
}

// askKey is the key of an action with no handler of its own: the call on
// the action's target, the status line saying what it asks for meanwhile.
func (m Model) askKey(name action.Name) (tea.Model, tea.Cmd) {
	a := action.Of(name)
	process := map[action.Target]string{
		action.TargetSelected: m.selected,
		action.TargetUsage:    board.Usage,
		action.TargetProducer: board.Producer,
		action.TargetCurrent:  board.Current,
	}[a.Target]
	m.setStatus(board.LevelAction, a.Key()+": "+a.Help.Desc+"…")
	return m, m.ask(action.Call{Name: name, Process: process})
}

// scale handles + and -: one consumer-usage instance more or less (1–3).
// The call's Count is the instances the viewer asks for, as its board
// shows them.
func (m Model) scale(name action.Name, delta int) (tea.Model, tea.Cmd) {
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
	return m, m.ask(action.Call{Name: name, Process: board.Usage, Count: n})
}

// lifecycle handles x, s and r on the selected process. The board shows the
// request at once ("crashing…"), before the supervisor confirms it.
func (m Model) lifecycle(op action.Name) (tea.Model, tea.Cmd) {
	name := m.selected
	if name == "" {
		return m, nil
	}
	pv := m.board.Process(name)
	if op == action.Restart && !pv.Alive {
		op = action.Start
	}
	if (op == action.Crash || op == action.Stop) && !pv.Alive {
		m.setStatus(board.LevelWarn, fmt.Sprintf("%s is not running (%s): r starts it", name, pv.StateLabel))
		return m, nil
	}
	switch op {
	case action.Crash:
		m.setStatus(board.LevelAction, fmt.Sprintf("crash %s: SIGKILL to pid %d and its group…", name, pv.PID))
	case action.Stop:
		m.setStatus(board.LevelAction, fmt.Sprintf("stop %s: SIGTERM to pid %d…", name, pv.PID))
	case action.Restart:
		m.setStatus(board.LevelAction, fmt.Sprintf("restart %s…", name))
	case action.Start:
		m.setStatus(board.LevelAction, fmt.Sprintf("start %s…", name))
	}
	return m, m.ask(action.Call{Name: op, Process: name})
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
	return m, m.ask(action.Call{Name: action.Freeze, Process: name})
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
	return m, m.ask(action.Call{Name: action.Pause, Process: board.Producer})
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
	return m, m.ask(action.Call{Name: action.Acks, Process: board.Producer})
}

// usageSwitch handles m and e: how consumer-usage runs from its next start.
// The lab restarts a running consumer-usage at once and leaves a stopped
// or crashed one stopped.
func (m Model) usageSwitch(op action.Name) (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Usage) {
		m.setStatus(board.LevelWarn, "no consumer-usage in this run")
		return m, nil
	}
	m.setStatus(board.LevelAction, "consumer-usage: switching its "+string(op)+"…")
	return m, m.ask(action.Call{Name: op, Process: board.Usage})
}

// cycleRebuild handles B: consumer-current's rebuild strategy moves one
// step along replay → snapshot → changelog → replay, from its next start.
func (m Model) cycleRebuild() (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Current) {
		m.setStatus(board.LevelWarn, "B: no consumer-current in this run")
		return m, nil
	}
	m.setStatus(board.LevelAction, "B: switching consumer-current's rebuild strategy…")
	return m, m.ask(action.Call{Name: action.Rebuild, Process: board.Current})
}

// injectBad handles b: the producer publishes one malformed record of
// every kind (a Count of 0).
func (m Model) injectBad() (tea.Model, tea.Cmd) {
	if !m.board.Has(board.Producer) || !m.board.Process(board.Producer).Alive {
		m.setStatus(board.LevelWarn, "b: the producer is not running, nothing can inject bad records")
		return m, nil
	}
	m.setStatus(board.LevelAction, "b: the producer publishes one malformed record of every kind…")
	return m, m.ask(action.Call{Name: action.InjectBad, Process: board.Producer})
}

// resetLab handles R: a new baseline for consumer-usage.
func (m Model) resetLab() (tea.Model, tea.Cmd) {
	m.setStatus(board.LevelAction, "R: new baseline: stopping consumer-usage, clearing usage records and checkpoints…")
	return m, m.ask(action.Call{Name: action.ResetLab, Process: board.Usage})
}
