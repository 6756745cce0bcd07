package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// Controller is what the dashboard asks of the lab: every action as one
// call (action.Call, carried out by the lab's one handler table) and the
// log overlay's lines. The model never calls it from Update: every call
// runs inside a tea.Cmd (off the Update goroutine) and comes back as an
// ActionResultMsg or a LogTailMsg. Do may block for as long as the action
// takes (a stop waits for the exit), so implementations need no goroutines
// of their own.
type Controller interface {
	action.Doer
	// Tail returns up to n of the latest stderr lines of the named process.
	Tail(name string, n int) []string
}

// ScenarioHost runs guided scenarios for the dashboard (the g key). Start
// and Stop are called from tea.Cmds, never from Update; the running
// scenario's narration (scenario.Progress) arrives among the lab's Inputs.
type ScenarioHost interface {
	// Catalog lists the scenarios (static data: read once).
	Catalog() []scenario.Scenario
	// Start stops the running scenario, if any, and starts name in the
	// background.
	Start(name string) error
	// Stop ends the running scenario and waits for its cleanup.
	Stop()
}

// ActionResultMsg is the lab's answer to one call.
type ActionResultMsg = action.Result

// LogTailMsg carries the lines Controller.Tail returned.
type LogTailMsg struct {
	Name  string
	Lines []string
}

func tail(ctl Controller, name string, n int) tea.Cmd {
	return func() tea.Msg {
		lines := ctl.Tail(name, n)
		for i, l := range lines {
			lines[i] = board.Shown(strings.ReplaceAll(l, "\t", "    "))
		}
		return LogTailMsg{Name: name, Lines: lines}
	}
}
