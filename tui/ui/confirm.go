package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
)

// confirmation is a key's question waiting for y: the status line asks it
// (long, or short when the line is narrow), y does yes, any other key
// cancels it and does nothing else. It is model state, so Update stays a
// pure transition: the key that asks sets it, the next key answers it.
type confirmation struct {
	long, short string
	yes         func(Model) (tea.Model, tea.Cmd)
	// cancelled is what the status line says when another key cancels.
	cancelled string
}

// answer takes the key after a question: y does what was asked.
func (m Model) answer(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	c := m.confirm
	m.confirm = nil
	if msg.String() == "y" {
		return c.yes(m)
	}
	m.setStatus(board.LevelInfo, c.cancelled)
	return m, nil
}

// question is the pending question fitted to width cells.
func (m Model) question(w int) string {
	c := m.confirm
	text := "? " + c.long
	if common.Width(text) > w {
		text = "? " + c.short
	}
	return common.Fit(m.styles.Level(board.LevelWarn).Render(text), w)
}

// addPartition handles P: after a y, the topic grows by one partition.
// Kafka removes none, so the key asks first.
func (m Model) addPartition() (tea.Model, tea.Cmd) {
	pv := m.board.Partitions()
	if !pv.Fresh() {
		m.setStatus(board.LevelWarn, "P: the topic's partitions are not known yet (the metadata is being read)")
		return m, nil
	}
	from, to := len(pv.Rows), len(pv.Rows)+1
	m.confirm = &confirmation{
		long: fmt.Sprintf("grow %s from %d to %d partitions? A topic cannot shrink: keys move for good. y: grow · any other key: cancel",
			pv.Topic, from, to),
		short:     fmt.Sprintf("grow %s to %d partitions for good? y: grow · other key: cancel", pv.Topic, to),
		cancelled: fmt.Sprintf("P cancelled: %s keeps its %d partitions", pv.Topic, from),
		yes: func(m Model) (tea.Model, tea.Cmd) {
			m.setStatus(board.LevelAction, fmt.Sprintf("growing %s to %d partitions…", pv.Topic, to))
			return m, m.ask(action.Call{Name: action.AddPartitions, Process: pv.Topic, Count: to})
		},
	}
	return m, nil
}

// setRetention handles T: after a y, the topic gets a short retention.
// What retention deletes is gone, so the key asks first.
func (m Model) setRetention() (tea.Model, tea.Cmd) {
	pv := m.board.Partitions()
	if pv.Retention > 0 {
		m.setStatus(board.LevelInfo, fmt.Sprintf("T: %s already has a retention of %s", pv.Topic, pv.Retention))
		return m, nil
	}
	m.confirm = &confirmation{
		long: fmt.Sprintf("give %s a short retention? Its oldest records are deleted for good. y: set it · any other key: cancel",
			pv.Topic),
		short:     fmt.Sprintf("short retention on %s, deleting for good? y: set · other key: cancel", pv.Topic),
		cancelled: fmt.Sprintf("T cancelled: %s keeps its retention", pv.Topic),
		yes: func(m Model) (tea.Model, tea.Cmd) {
			m.setStatus(board.LevelAction, fmt.Sprintf("giving %s a short retention…", pv.Topic))
			return m, m.ask(action.Call{Name: action.Retention, Process: pv.Topic})
		},
	}
	return m, nil
}
