// Package logs renders the log overlay: the last stderr lines of one
// process, newest at the bottom.
package logs

import (
	"strings"

	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the overlay body.
type Panel struct {
	Styles *theme.Styles
	Name   string
	Lines  []string
}

// Title is the box title.
func (p Panel) Title() string {
	return "Logs · " + p.Name + " (stderr, newest last) · l or esc to close"
}

// View renders the last lines that fit.
func (p Panel) View(width, height int) string {
	lines := common.Elide(p.Lines, height)
	if len(lines) == 0 {
		lines = []string{p.Styles.Muted.Render("no log lines from " + p.Name + " yet")}
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}
