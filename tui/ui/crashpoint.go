package ui

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// DefaultArmAfter is how long c rests before the point it chose is armed:
// time for a presenter to press c again and pass after-delta, which fires
// within a fraction of a second while the producer runs.
const DefaultArmAfter = 1500 * time.Millisecond

// crashChoice is the crash point c is choosing: each c moves it one step
// along none → after-delta → after-checkpoint → none, and only the point it
// rests on is armed.
type crashChoice struct {
	point lesson.CrashPoint
	seq   int // the latest c; a due message of an earlier one is stale
	open  bool
}

// crashChoiceDue: c rested for ArmAfter since its seq-th press.
type crashChoiceDue struct{ seq int }

// armCrash handles c: the choice moves one step from what is armed (or
// from what this choice shows), and is armed once c rests.
func (m Model) armCrash() (tea.Model, tea.Cmd) {
	pv := m.board.Process(board.Usage)
	if !m.board.Has(board.Usage) || !pv.Alive {
		m.choice = crashChoice{}
		m.setStatus(board.LevelWarn, "c: consumer-usage is not running, nothing to arm")
		return m, nil
	}
	if pv.Usage != nil && pv.Usage.Command != "" {
		// The user's command has no crash points: the lab says so at once,
		// with no choice to rest on first.
		m.choice = crashChoice{}
		return m, m.ask(action.Call{Name: action.CrashAt, Process: board.Usage, Value: string(lesson.NextCrashPoint(""))})
	}
	from := lesson.CrashPoint(pv.Armed)
	if m.choice.open {
		from = m.choice.point
	}
	m.choice = crashChoice{point: lesson.NextCrashPoint(from), seq: m.choice.seq + 1, open: true}
	verb := "armed"
	if m.choice.point == lesson.NoCrashPoint {
		verb = "disarmed"
	}
	m.setStatus(board.LevelAction, fmt.Sprintf("c: crash point %s, %s in %.1f s (c again: next point)",
		m.choice.point, verb, m.opts.ArmAfter.Seconds()))
	seq := m.choice.seq
	return m, tea.Tick(m.opts.ArmAfter, func(time.Time) tea.Msg { return crashChoiceDue{seq: seq} })
}

// armChosen arms the point c rested on.
func (m Model) armChosen(due crashChoiceDue) (tea.Model, tea.Cmd) {
	if !m.choice.open || due.seq != m.choice.seq {
		return m, nil // c was pressed again since
	}
	point := m.choice.point
	m.choice.open = false
	pv := m.board.Process(board.Usage)
	if !pv.Alive {
		m.setStatus(board.LevelWarn, "c: consumer-usage stopped before "+string(point)+" was armed; nothing armed")
		return m, nil
	}
	m.setStatus(board.LevelAction, "c: arming "+string(point)+" on consumer-usage…")
	m.crashBeforeArm = pv.LastCrashPoint
	return m, m.ask(action.Call{Name: action.CrashAt, Process: board.Usage, Value: string(point)})
}
