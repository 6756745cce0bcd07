package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Inputs is a run of board inputs applied in one Update, so the screen is
// drawn once for all of them.
type Inputs []any

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
