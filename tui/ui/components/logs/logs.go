// Package logs renders the log view: the stderr lines of one process,
// newest at the bottom, in a viewport that scrolls back.
package logs

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"

	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the log view's body.
type Panel struct {
	Styles *theme.Styles
	Name   string
	Lines  []string
	// Back is how many lines the view is scrolled back from the newest.
	Back int
}

// Wrap folds each line to width, its continuations indented by two
// spaces: a log line's end is where its point or error is.
func Wrap(lines []string, width int) []string {
	if width < 8 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		parts := common.Wrap(l, width)
		if len(parts) <= 1 {
			out = append(out, l)
			continue
		}
		out = append(out, parts[0])
		for _, rest := range common.Wrap(strings.Join(parts[1:], " "), width-2) {
			out = append(out, "  "+rest)
		}
	}
	return out
}

// Title is the box title, with where the view is when it scrolls.
func (p Panel) Title(width, height int) string {
	t := "Logs · " + p.Name + " (stderr, newest last) · l or esc to close"
	if len(p.Lines) > height && height > 0 {
		back := p.back(height)
		t += fmt.Sprintf(" · lines %d-%d of %d · [ ] scroll", len(p.Lines)-back-height+1, len(p.Lines)-back, len(p.Lines))
	}
	return t
}

// MaxBack is the largest useful Back at this height.
func (p Panel) MaxBack(height int) int { return max(0, len(p.Lines)-height) }

func (p Panel) back(height int) int { return max(0, min(p.Back, p.MaxBack(height))) }

// View renders the lines that fit, the newest last unless scrolled back.
func (p Panel) View(width, height int) string {
	if len(p.Lines) == 0 {
		return common.Fit(p.Styles.Muted.Render("no log lines from "+p.Name+" yet"), width)
	}
	vp := viewport.New(width, height)
	vp.SetContent(strings.Join(p.Lines, "\n"))
	vp.SetYOffset(max(0, len(p.Lines)-height-p.back(height)))
	return strings.Join(common.FitLines(common.Lines(vp.View()), width, min(height, len(p.Lines))), "\n")
}
