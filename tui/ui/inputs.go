package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// Inputs is a run of the lab's inputs (lab.Inputs) applied in one Update,
// so the screen is drawn once for all of them: board inputs, and a
// scenario's narration (a board.Narration of scenario.Progress) in the
// order it was reported.
type Inputs []board.Input

// Narration is a scenario's narration among the lab's Inputs.
type Narration = board.Narration[scenario.Progress]

// BoardChanged tells a model whose board someone else fed (a hub shared
// by several sessions applies each input once) that the board took
// Inputs; the model takes from them only what is not the board's (the
// narration).
type BoardChanged struct{ Inputs Inputs }

// FPS is how often a program may write a frame (tea.WithFPS). bubbletea's
// renderer wakes on a ticker at this rate whether there is a frame or not,
// each wake-up CPU spent on nothing (docs/performance.md); at 20 rather
// than its default 60, a change waits at most 50 ms for its frame.
const FPS = 20

// Frame is how soon Forward hands over an urgent input (a process
// started or exited, an operator's request and its answer, a scenario's
// step): well within one of the renderer's frames, so the screen says a
// crash at the renderer's next frame.
const Frame = time.Second / 60

// Settle is how long Forward gathers routine inputs (the pollers'
// readings, progress reports, clock ticks) before it hands them over. The
// pollers read every 0.5 s or more and each emits on its own, so drawing
// every one of them cost the idle dashboard most of its CPU; a quarter of a
// second more on a reading is not a change the eye can follow.
const Settle = 500 * time.Millisecond

// Forward hands the inputs from in to send, gathered: the first input of a
// run opens a window (frame when it is urgent, else Settle), an urgent
// input shortens it to frame, and everything that arrives within it goes
// in the same Inputs. bubbletea calls View after every message, so this
// draws once per window instead of once per input. It returns when in is
// closed, after sending what it gathered.
func Forward(in <-chan board.Input, send func(tea.Msg), frame time.Duration) {
	for first := range in {
		run := Inputs{first}
		deadline := time.Now().Add(windowFor(first, frame))
		window := time.NewTimer(time.Until(deadline))
	gather:
		for {
			select {
			case next, ok := <-in:
				if !ok {
					break gather
				}
				run = append(run, next)
				if soon := time.Now().Add(frame); next.Urgent() && soon.Before(deadline) {
					deadline = soon
					window.Reset(time.Until(deadline))
				}
			case <-window.C:
				break gather
			}
		}
		window.Stop()
		send(run)
	}
}

func windowFor(in board.Input, frame time.Duration) time.Duration {
	if in.Urgent() {
		return frame
	}
	return max(frame, Settle)
}

// take handles a run of inputs in order: the narration goes to the
// scenario panel, board inputs into the board unless someone else applied
// them already (applied).
func (m Model) take(run Inputs, applied bool) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	for _, in := range run {
		switch in := in.(type) {
		case Narration:
			next, cmd := m.narrate(in.Step)
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
