// Package events renders the timeline: newest at the bottom, one line per
// entry with its time, a symbol for its kind, the process and the text.
package events

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

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

// View renders the latest entries that fit, each wrapped at words under
// its text (a long error reads in full on two or three lines).
func (p Panel) View(width, height int) string {
	if width <= 0 || height <= 0 {
		return ""
	}
	st := p.Styles
	evs := p.Events
	if len(evs) > height {
		evs = evs[len(evs)-height:]
	}
	procW := 0
	for _, e := range evs {
		procW = max(procW, len(e.Proc))
	}
	// Each entry's lines; the newest entries that fit are shown whole.
	entries := make([][]string, 0, len(evs))
	for _, e := range evs {
		ls := st.Level(e.Level)
		prefix := st.Muted.Render(e.At.Format("15:04:05")) + " " + ls.Render(symbol[e.Level]) + " "
		if procW > 0 {
			prefix += common.Fit(e.Proc, procW) + "  "
		}
		indent := lipgloss.Width(prefix)
		wrapped := common.Wrap(e.Text, max(10, width-indent))
		if len(wrapped) > maxEventLines {
			wrapped = append(wrapped[:maxEventLines-1], ansi.Truncate(strings.Join(wrapped[maxEventLines-1:], " "), width-indent, "…"))
		}
		var el []string
		for k, w := range wrapped {
			lead := prefix
			if k > 0 {
				lead = strings.Repeat(" ", indent)
			}
			el = append(el, lead+ls.UnsetBold().Render(w))
		}
		entries = append(entries, el)
	}
	var lines []string
	for i := len(entries) - 1; i >= 0; i-- {
		el := entries[i]
		if room := height - len(lines); len(el) > room {
			// The entry that does not fit whole shows its first lines,
			// cut, rather than leaving the rows empty.
			if room > 0 {
				el = append(el[:room-1:room-1], ansi.Truncate(el[room-1], width-1, "")+"…")
				lines = append(el, lines...)
			}
			break
		}
		lines = append(append([]string(nil), el...), lines...)
	}
	if len(lines) == 0 {
		lines = []string{st.Muted.Render("nothing happened yet")}
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}

// maxEventLines bounds one entry's share of the panel.
const maxEventLines = 3
