package lab

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// Observe runs f on the lab's own board (the one every input is applied to,
// whatever the front end) while holding its lock: the race-free way for a
// guided scenario to read what the dashboard shows. f must return quickly
// and must not keep the pointer. Before Launch there is no board and f is
// not called.
func (l *Lab) Observe(f func(*board.Board)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mirror != nil {
		f(l.mirror)
	}
}

// Note puts a line on the timeline (shown by the TUI, printed by headless).
func (l *Lab) Note(text string) {
	l.emit(board.Action{At: time.Now(), Text: text})
}

// Narrate hands a guided scenario's progress to the front end on Inputs,
// in order with the board inputs around it (a Runner's OnProgress), as a
// board.Narration: the board does not apply it, the dashboard's narration
// panel shows it.
func (l *Lab) Narrate(p scenario.Progress) { l.out <- board.Narration[scenario.Progress]{Step: p} }
