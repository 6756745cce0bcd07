package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// Inputs is a run of the lab's inputs (lab.Inputs) applied in one Update,
// so the screen is drawn once for all of them: board inputs, and a
// scenario's narration (scenario.Progress) in the order it was reported.
type Inputs []any

// BoardChanged tells a model whose board someone else fed (a hub shared
// by several sessions applies each input once) that the board took
// Inputs; the model takes from them only what is not the board's (the
// narration).
type BoardChanged struct{ Inputs Inputs }

// Frame is how long Forward gathers inputs before it hands them over: one
// frame of bubbletea's renderer (60 per second), so gathering never delays
// what the screen shows by more than the renderer itself does.
const Frame = time.Second / 60

// Forward hands the inputs from in to send, gathered: the first input of a
// run opens a window of frame, and everything that arrives within it goes
// in the same Inputs. bubbletea calls View after every message, and the
// lab's pollers emit in bursts (watermarks with commits, a snapshot with
// its truth), so this draws once per burst instead of once per input. It
// returns when in is closed, after sending what it gathered.
func Forward(in <-chan any, send func(tea.Msg), frame time.Duration) {
	for first := range in {
		run := Inputs{first}
		window := time.NewTimer(frame)
	gather:
		for {
			select {
			case next, ok := <-in:
				if !ok {
					break gather
				}
				run = append(run, next)
			case <-window.C:
				break gather
			}
		}
		window.Stop()
		send(run)
	}
}

// take handles a run of inputs in order: the narration goes to the
// scenario panel, board inputs into the board unless someone else applied
// them already (applied).
func (m Model) take(run Inputs, applied bool) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	for _, in := range run {
		switch in := in.(type) {
		case scenario.Progress:
			next, cmd := m.narrate(in)
			m = next.(Model)
			cmds = append(cmds, cmd)
		default:
			if !applied {
				m.board.Apply(in)
			}
		}
	}
	m.statusFollowsArm()
	m.keepSelection()
	return m, tea.Batch(append(cmds, m.refreshLogs())...)
}
