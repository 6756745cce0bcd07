// Package help renders the key footer with bubbles/help: one line of the
// essential keys, or every key in columns when ShowAll is on.
package help

import (
	"strings"

	bhelp "github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Footer is the help footer.
type Footer struct {
	Styles  *theme.Styles
	Keys    bhelp.KeyMap
	ShowAll bool
	// Pinned keys end the short line at every width ("? help · q quit"):
	// the other keys give way to them.
	Pinned []key.Binding
}

func (f Footer) model(width int) bhelp.Model {
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
	return m
}

// View renders the footer; the full help takes as many lines as it needs
// up to height.
func (f Footer) View(width, height int) string {
	if f.ShowAll || len(f.Pinned) == 0 {
		lines := common.Lines(f.model(width).View(f.Keys))
		return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
	}
	pinned := map[string]bool{}
	for _, b := range f.Pinned {
		pinned[b.Help().Key] = true
	}
	var rest, tail []key.Binding
	for _, b := range f.Keys.ShortHelp() {
		if pinned[b.Help().Key] {
			tail = append(tail, b)
		} else {
			rest = append(rest, b)
		}
	}
	end := f.model(width).ShortHelpView(tail)
	sep := f.Styles.Separator.Render(" · ")
	// The other keys in order while they fit, then "…" if some did not.
	room := width - lipgloss.Width(end)
	ellipsis := f.Styles.Muted.Render("…")
	var b strings.Builder
	for i, k := range rest {
		if !k.Enabled() {
			continue
		}
		item := f.Styles.Key.Render(k.Help().Key) + " " + f.Styles.KeyDesc.Render(k.Help().Desc) + sep
		need := lipgloss.Width(item)
		if i < len(rest)-1 {
			need += lipgloss.Width(ellipsis + sep) // room to say more follow
		}
		if lipgloss.Width(b.String())+need > room {
			b.WriteString(ellipsis + sep)
			break
		}
		b.WriteString(item)
	}
	return common.Fit(b.String()+end, width)
}
