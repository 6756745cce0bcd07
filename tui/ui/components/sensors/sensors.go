// Package sensors renders consumer-current's state of every sensor, and
// says plainly when that state is not live (down, failing, restarted,
// rebuilding) instead of presenting old numbers as current.
package sensors

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the sensors panel body: a status line, a header and the rows.
type Panel struct {
	Styles *theme.Styles
	State  board.SensorsView
	// Compact prefixes the status line with the panel name (no box title).
	Compact bool
}

// New builds the panel.
func New(st *theme.Styles, v board.SensorsView, compact bool) Panel {
	return Panel{Styles: st, State: v, Compact: compact}
}

// Title is the box title.
func Title() string { return "Sensors · consumer-current" }

// View renders the panel in width×height.
func (p Panel) View(width, height int) string {
	st, v := p.Styles, p.State
	lines := []string{p.statusLine(width)}
	if v.StaleRows {
		// Said in words on its own line, so it survives any width.
		lines = append(lines, common.Fit(st.Bad.Render("  STALE")+" "+
			fmt.Sprintf("values of %s, not live", v.AsOf.Format("15:04:05")), width))
	}

	cols := []common.Column{
		{Title: "sensor"},
		{Title: "hours", Align: common.Right},
		{Title: "km", Align: common.Right},
		{Title: "lat", Align: common.Right, Drop: 3},
		{Title: "lon", Align: common.Right, Drop: 3},
		{Title: "age", Align: common.Right, Drop: 2},
		{Title: "audit", Drop: 4},
	}
	rows := make([][]common.Cell, len(v.Rows))
	for i, r := range v.Rows {
		base := lipgloss.NewStyle()
		if r.Stale {
			base = st.Stale
		}
		age := "—"
		if r.AgeKnown {
			age = common.Ago(r.Age)
		}
		check := common.Styled(checkWord(r), checkStyle(st, r))
		rows[i] = []common.Cell{
			common.Styled(r.SensorID, base),
			common.Styled(common.Fixed2(r.HoursTot), base),
			common.Styled(common.Fixed2(r.KmTot), base),
			common.Styled(common.Coord(r.Lat), base),
			common.Styled(common.Coord(r.Lon), base),
			common.Styled(age, base),
			check,
		}
	}
	if len(rows) == 0 {
		return strings.Join(common.FitLines(append(lines, "", st.Muted.Render("  no sensor state yet")), width, height), "\n")
	}
	head, body := common.Table(cols, rows, width, st.Header, nil)
	lines = append(lines, head)
	lines = append(lines, common.Clip(body, height-len(lines), func(n int) string {
		return st.Muted.Render(fmt.Sprintf("  … %d more sensors", n))
	})...)
	return strings.Join(common.FitLines(lines, width, height), "\n")
}

func (p Panel) statusLine(width int) string {
	st, v := p.Styles, p.State
	title := ""
	if p.Compact {
		title = "Sensors"
	}
	word := common.StatusWord(st, v.Status, title)
	switch v.Status {
	case board.Live:
		return common.Fit(word+" "+fmt.Sprintf("%d sensors, caught up", len(v.Rows)), width)
	case board.Rebuilding:
		pct := fmt.Sprintf(" %d%%", max(0, min(99, int(v.Progress*100))))
		count := fmt.Sprintf(" %s/%s msgs", common.Count(v.Done), common.Count(v.Total))
		barW := width - lipgloss.Width(word) - lipgloss.Width(pct) - lipgloss.Width(count) - 1
		if barW < 8 {
			count = ""
			barW = width - lipgloss.Width(word) - lipgloss.Width(pct) - 1
		}
		bar := ""
		if barW >= 4 {
			bar = " " + progress.New(
				progress.WithSolidFill(st.ProgressFull), progress.WithoutPercentage(),
				progress.WithWidth(barW), progress.WithColorProfile(lipgloss.ColorProfile()),
			).ViewAs(v.Progress)
		}
		return common.Fit(word+st.Warn.Render(pct)+bar+count, width)
	}
	reason := v.Reason
	if p.Compact {
		// The title already names the process.
		reason = strings.TrimPrefix(reason, "consumer-current is ")
	}
	return common.Fit(word+" "+reason, width)
}

func checkWord(r board.SensorRow) string {
	if r.Stale {
		return "stale"
	}
	switch r.Truth {
	case board.TruthMatch:
		return "same"
	case board.TruthBehind:
		return "behind"
	case board.TruthDiffers:
		return "DIFFERS"
	}
	return ""
}

func checkStyle(st *theme.Styles, r board.SensorRow) lipgloss.Style {
	if r.Stale {
		return st.Stale
	}
	switch r.Truth {
	case board.TruthMatch:
		return st.Good
	case board.TruthDiffers:
		return st.Bad
	}
	return st.Muted
}
