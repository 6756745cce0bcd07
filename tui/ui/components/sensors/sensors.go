// Package sensors renders consumer-current's state of every sensor, and
// says plainly when that state is not live (down, failing, restarted,
// rebuilding) instead of presenting old numbers as current.
package sensors

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

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
	// Invalid is how many invalid messages consumer-current skipped: said
	// on the line under the rows (beside the usage's total).
	Invalid int64
}

// New builds the panel.
func New(st *theme.Styles, v board.SensorsView, compact bool) Panel {
	return Panel{Styles: st, State: v, Compact: compact}
}

// Title is the box title.
func Title() string { return "Sensors · consumer-current" }

var (
	colSensor = common.Column{Title: "sensor", Width: 9}
	colHours  = common.Column{Title: "hours", Align: common.Right, Width: 8}
	colKm     = common.Column{Title: "km", Align: common.Right, Width: 8}
	colAudit  = common.Column{Title: "audit", Width: 6}
	colAge    = common.Column{Title: "age", Align: common.Right, Width: 7}
	colLat    = common.Column{Title: "lat", Align: common.Right, Width: 8}
	colLon    = common.Column{Title: "lon", Align: common.Right, Width: 9}
)

// columnGroups is what a width holds, in the order a class needs it: the
// sensor and its hours always; then the audit's check (is this state the
// topic's?); then km (it moves with the hours in every message); then the
// age, then the position.
var columnGroups = [][]common.Column{{colSensor, colHours}, {colAudit}, {colKm}, {colAge}, {colLat, colLon}}

// columnOrder is the order the columns read in, the audit's check last.
var columnOrder = []common.Column{colSensor, colHours, colKm, colAge, colLat, colLon, colAudit}

// Columns is what a panel width holds, in reading order; with every
// column, they widen to fill the width. The choice depends on the width
// alone, never on the values.
func Columns(width int) []common.Column { return common.ColumnsFor(width, columnGroups, columnOrder) }

// Width is the table's width with every column; MinWidth with the sensor,
// its hours and the audit's check.
func Width() int    { return common.TableWidth(columnOrder) }
func MinWidth() int { return common.TableWidth([]common.Column{colSensor, colHours, colAudit}) }

// View renders the panel in width×height.
func (p Panel) View(width, height int) string {
	st, v := p.Styles, p.State
	lines := p.statusLines(width)

	cols := Columns(width)
	// How the state was rebuilt, under the status, while that leaves
	// every row and the invalid count their lines.
	if line := p.rebuildLine(width); line != "" && len(lines)+1+1+len(v.Rows)+p.invalidLines() <= height {
		lines = append(lines, line)
	}
	// Sensors a replay could not rebuild are the news: before the rows.
	for _, f := range v.Forgotten {
		for _, l := range common.Wrap(f.Short(), width) {
			lines = append(lines, st.Bad.Render(l))
		}
	}
	if len(v.Rows) == 0 {
		return strings.Join(common.FitLines(append(lines, "", st.Muted.Render("  no sensor state yet")), width, height), "\n")
	}
	shown, more := common.Shown(len(v.Rows), height-len(lines)-1)
	kept := keptRows(v.Rows, shown)
	rows := make([][]common.Cell, shown)
	for i, r := range kept {
		var base lipgloss.Style // plain
		if r.Stale {
			base = st.Stale
		}
		age := "—"
		if r.AgeKnown {
			age = common.Ago(r.Age)
		}
		cell := map[string]common.Cell{
			colSensor.Title: common.Styled(r.SensorID, base),
			colHours.Title:  common.Styled(common.FitNumber(r.HoursTot, colHours.Width), base),
			colKm.Title:     common.Styled(common.FitNumber(r.KmTot, colKm.Width), base),
			colLat.Title:    common.Styled(common.Coord(r.Lat), base),
			colLon.Title:    common.Styled(common.Coord(r.Lon), base),
			colAge.Title:    common.Styled(age, base),
			colAudit.Title:  common.Styled(checkWord(r), checkStyle(st, r)),
		}
		rows[i] = make([]common.Cell, len(cols))
		for c, col := range cols {
			rows[i][c] = cell[col.Title]
		}
	}
	head, body := common.Table(st.Renderer(), cols, rows, width, st.Header, nil)
	lines = append(append(lines, head), body...)
	if more > 0 {
		lines = append(lines, st.Muted.Render("  … "+board.Plural(int64(more), "more sensor")+hiddenWord(v.Rows, kept)))
	}
	if p.Invalid > 0 {
		lines = append(lines, common.Fit(st.Warn.Render(fmt.Sprintf("%d invalid skipped", p.Invalid))+st.Muted.Render(" (b injects)"), width))
	}
	return strings.Join(common.FitLines(lines, width, height), "\n")
}

// keptRows is the n rows a short panel shows: a state the audit calls
// wrong first (the lesson is about it), the others in order after them, all
// in sensor order.
func keptRows(rows []board.SensorRow, n int) []board.SensorRow {
	return common.KeepFirst(rows, n, func(r board.SensorRow) bool { return r.Truth == board.TruthDiffers })
}

// hiddenWord says what the rows left out are: ", N WRONG" when some hidden
// state is wrong (more than fit), ", same" when the audit read the same
// message for every one of them.
func hiddenWord(rows, kept []board.SensorRow) string {
	shown := map[string]bool{}
	for _, r := range kept {
		shown[r.SensorID] = true
	}
	wrong, same, hidden := 0, 0, 0
	for _, r := range rows {
		if shown[r.SensorID] {
			continue
		}
		hidden++
		switch {
		case r.Truth == board.TruthDiffers:
			wrong++
		case r.Truth == board.TruthMatch && !r.Stale:
			same++
		}
	}
	switch {
	case wrong > 0:
		return fmt.Sprintf(", %d WRONG", wrong)
	case same == hidden:
		return ", same"
	}
	return ""
}

// rebuildLine is how the state was rebuilt, in width ("" when not known).
func (p Panel) rebuildLine(width int) string {
	v := p.State
	text := v.Rebuild
	if common.Width(text) > width {
		text = v.RebuildShort
	}
	if text == "" {
		return ""
	}
	return common.Fit(p.Styles.Muted.Render(text), width)
}

func (p Panel) invalidLines() int {
	if p.Invalid > 0 {
		return 1
	}
	return 0
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
		text := fmt.Sprintf("%d sensors, caught up", len(v.Rows))
		if p.Compact {
			text = fmt.Sprintf("%d sensors", len(v.Rows))
		}
		return common.Fit(word+" "+text, width)
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
				progress.WithWidth(barW), progress.WithColorProfile(st.Renderer().ColorProfile()),
			).ViewAs(v.Progress)
		}
		return common.Fit(word+st.Warn.Render(pct)+bar+count, width)
	}
	return ""
}

// statusLines is the status on one line, or two (wrapped at words) when a
// reason needs them: why the panel is not live and, when the rows are old
// values, since when.
func (p Panel) statusLines(width int) []string {
	st, v := p.Styles, p.State
	if v.Status == board.Live && len(v.Rows) == 0 {
		// Caught up on an empty topic: nothing is live yet, said whole.
		word := common.StatusWord(st, board.Waiting, "")
		if p.Compact {
			word = common.StatusWord(st, board.Waiting, "Sensors")
		}
		return common.FitLines(common.Wrap(word+" for the first sensor message", width), width, 2)
	}
	if v.Status == board.Live || v.Status == board.Rebuilding {
		return []string{p.statusLine(width)}
	}
	title := ""
	if p.Compact {
		title = "Sensors"
	}
	reason := v.Reason
	if p.Compact {
		// The title already names the process.
		reason = strings.TrimPrefix(reason, "consumer-current is ")
	}
	if v.Status == board.Waiting {
		reason = strings.TrimPrefix(reason, "waiting ") // "WAITING for …"
	}
	text := common.StatusWord(st, v.Status, title) + " " + reason
	if v.StaleRows {
		// Said in words, so it survives any colour scheme.
		text += " · " + st.Bad.Render("STALE")
		if !p.Compact {
			text += fmt.Sprintf(" as of %s", v.AsOf.Format("15:04:05"))
		}
	}
	lines := common.Wrap(text, width)
	if len(lines) > 2 {
		lines = append(lines[:1], ansi.Truncate(strings.Join(lines[1:], " "), width, "…"))
	}
	return common.FitLines(lines, width, len(lines))
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
	case board.TruthAhead:
		return "ahead"
	case board.TruthDiffers:
		return "WRONG"
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
