// Package events renders the timeline: newest at the bottom, one line per
// entry with its time, a symbol for its kind, the process and the text.
package events

import (
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the timeline.
type Panel struct {
	Styles *theme.Styles
	Events []board.Event
}

// Title is the box title.
func Title() string { return "Events" }

var symbol = map[board.Level]string{
	board.LevelInfo:   "·",
	board.LevelGood:   "✓",
	board.LevelWarn:   "!",
	board.LevelBad:    "✗",
	board.LevelAction: "›",
	board.LevelMuted:  " ",
}

// View renders the latest entries that fit.
func (p Panel) View(width, height int) string {
	st := p.Styles
	evs := p.Events
	if len(evs) > height {
		evs = evs[len(evs)-height:]
	}
	procW := 0
	for _, e := range evs {
		procW = max(procW, len(e.Proc))
	}
	lines := make([]string, 0, len(evs))
	for _, e := range evs {
		ls := st.Level(e.Level)
		text := e.Text
		if e.Level == board.LevelMuted {
			text = "  " + text
		}
		line := st.Muted.Render(e.At.Format("15:04:05")) + " " + ls.Render(symbol[e.Level]) + " "
		if procW > 0 {
			line += common.Fit(e.Proc, procW) + "  "
		}
		line += ls.UnsetBold().Render(text)
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		lines = []string{st.Muted.Render("nothing happened yet")}
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}
