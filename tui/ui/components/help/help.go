// Package help renders the key footer with bubbles/help: one line of the
// essential keys, or every key in columns when ShowAll is on.
package help

import (
	"strings"

	bhelp "github.com/charmbracelet/bubbles/help"

	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Footer is the help footer.
type Footer struct {
	Styles  *theme.Styles
	Keys    bhelp.KeyMap
	ShowAll bool
}

// View renders the footer; the full help takes as many lines as it needs
// up to height.
func (f Footer) View(width, height int) string {
	m := bhelp.New()
	m.Width = width
	m.ShowAll = f.ShowAll
	m.ShortSeparator = " · "
	m.FullSeparator = "   "
	m.Styles = bhelp.Styles{
		Ellipsis:       f.Styles.Muted,
		ShortKey:       f.Styles.Key,
		ShortDesc:      f.Styles.KeyDesc,
		ShortSeparator: f.Styles.Separator,
		FullKey:        f.Styles.Key,
		FullDesc:       f.Styles.KeyDesc,
		FullSeparator:  f.Styles.Separator,
	}
	lines := common.Lines(m.View(f.Keys))
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}
