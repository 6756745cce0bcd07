// Package usage renders the usage panel: per sensor what consumer-query
// answers (recorded), what the audit of the topic says should have been
// recorded (expected), and the drift between them, classified.
package usage

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the usage panel body: a status line, a header, the rows and a
// totals row, in columns of fixed widths: values up to 99,999.99 and
// 99,999 records fit (totals drop decimals they have no room for).
type Panel struct {
	Styles  *theme.Styles
	State   board.UsageView
	Compact bool
	// Writer is consumer-usage, whose records consumer-query answers: while
	// it is not running the totals are frozen, and the panel says so.
	Writer    board.ProcView
	HasWriter bool
	// Invalid is how many invalid messages consumer-usage's instances
	// skipped (and sent to the dead-letter topic).
	Invalid int64
}

// New builds the panel.
func New(st *theme.Styles, v board.UsageView, compact bool) Panel {
	return Panel{Styles: st, State: v, Compact: compact}
}

// WithWriter sets consumer-usage's row.
func (p Panel) WithWriter(pv board.ProcView) Panel {
	p.Writer, p.HasWriter = pv, true
	return p
}

// Title is the box title, with the invalid messages skipped once there
// are any.
func (p Panel) Title() string {
	t := "Usage · consumer-query vs audit"
	if p.HasWriter && p.Writer.Usage != nil && p.Writer.Usage.Command != "" {
		// The lab reads the records of the user's consumer itself.
		t = "Usage · your consumer's records vs audit"
	}
	if p.Invalid > 0 {
		t += " · " + p.Styles.Warn.Render(board.Plural(p.Invalid, "invalid message")+" skipped, sent to the DLQ")
	}
	return t
}

// verdictWord fits every verdict in 9 cells.
var verdictWord = map[board.Verdict]string{
	board.VerdictOver: "overcount",
}

var (
	colSensor  = common.Column{Title: "sensor", Width: 9}
	colRecH    = common.Column{Title: "rec h", Align: common.Right, Width: 8}
	colExpH    = common.Column{Title: "exp h", Align: common.Right, Width: 8}
	colDriftH  = common.Column{Title: "drift h", Align: common.Right, Width: 9}
	colRecKm   = common.Column{Title: "rec km", Align: common.Right, Width: 8}
	colExpKm   = common.Column{Title: "exp km", Align: common.Right, Width: 8}
	colDriftKm = common.Column{Title: "drift km", Align: common.Right, Width: 9}
	colRecs    = common.Column{Title: "recs", Align: common.Right, Width: 6}
	colVerdict = common.Column{Title: "verdict", Width: 9}
)

// columnGroups is what a width holds, in the order a class needs it:
// recorded, expected, the drift and the verdict first (the lesson: what
// was recorded against what happened); then the record count (a message
// counted twice is a record too many); then the km drift, and the km
// totals last: every message carries hours and km together, so the hours
// already tell the story and the verdict weighs both.
var columnGroups = [][]common.Column{
	{colSensor, colRecH, colExpH, colDriftH, colVerdict},
	{colRecs},
	{colDriftKm},
	{colRecKm, colExpKm},
}

// columnOrder is the order the columns read in, whichever are shown.
var columnOrder = []common.Column{colSensor, colRecH, colExpH, colDriftH, colRecKm, colExpKm, colDriftKm, colRecs, colVerdict}

// Columns is what a panel width holds (the first group always), in
// reading order; with every column, they widen to fill the width. The
// choice depends on the width alone, never on the values.
func Columns(width int) []common.Column { return common.ColumnsFor(width, columnGroups, columnOrder) }

// held is the columns width holds, at their own widths.
func held(width int) []common.Column { return common.HeldColumns(width, columnGroups, columnOrder) }

// Width is the table's width with every column; MinWidth with the first
// group alone.
func Width() int    { return common.TableWidth(columnOrder) }
func MinWidth() int { return common.TableWidth(columnGroups[0]) }

// WidthFor is the width of the columns that width holds, unwidened (at
// most width).
func WidthFor(width int) int { return min(width, common.TableWidth(held(width))) }

// View renders the panel in width×height.
func (p Panel) View(width, height int) string {
	st, v := p.Styles, p.State
	lines := []string{p.statusLine(width)}
	cols := Columns(width)
	if len(v.Rows) == 0 {
		msg := "  no usage yet"
		if v.Truth != board.Live {
			msg = "  " + v.TruthReason
		}
		return strings.Join(common.FitLines(append(lines, "", st.Muted.Render(msg)), width, height), "\n")
	}
	// The status line, the header and the total leave the rest to rows.
	shown, more := common.Shown(len(v.Rows), height-3)
	kept := keptRows(v.Rows, shown)
	rows := make([][]common.Cell, 0, shown+1)
	for _, r := range kept {
		rows = append(rows, p.row(r, lipgloss.Style{}, cols))
	}
	total := p.row(v.Total, st.Strong, cols)
	head, body := common.Table(st.Renderer(), cols, append(rows, total), width, st.Header, nil)
	totalLine, body := body[len(body)-1], body[:len(body)-1]
	lines = append(append(lines, head), body...)
	if more > 0 {
		lines = append(lines, st.Muted.Render("  … "+board.Plural(int64(more), "more sensor")+hiddenWord(v.Rows, kept)))
	}
	lines = append(lines, totalLine)
	return strings.Join(common.FitLines(lines, width, height), "\n")
}

// keptRows is the n rows a short panel shows: the sensors that drift first
// (a scenario's checks are about them), the others in order after them,
// all in sensor order.
func keptRows(rows []board.UsageRow, n int) []board.UsageRow {
	return common.KeepFirst(rows, n, drifts)
}

func drifts(r board.UsageRow) bool {
	switch r.Verdict {
	case board.VerdictOver, board.VerdictLost, board.VerdictMixed:
		return true
	}
	return false
}

// hiddenWord says what the rows left out are: ", exact" when every one
// of them is, ", N of them drifting" when some drift (more drift than fit),
// so the panel never hides a drift without saying so.
func hiddenWord(rows, kept []board.UsageRow) string {
	shown := map[string]bool{}
	for _, r := range kept {
		shown[r.SensorID] = true
	}
	drifting, exact, waiting, hidden := 0, 0, 0, 0
	for _, r := range rows {
		if shown[r.SensorID] {
			continue
		}
		hidden++
		switch {
		case drifts(r):
			drifting++
		case r.Verdict == board.VerdictExact:
			exact++
		case waits(r):
			waiting++
		}
	}
	switch {
	case drifting > 0:
		return fmt.Sprintf(", %d of them drifting", drifting)
	case exact == hidden:
		return ", exact"
	case waiting == hidden:
		return ", " + waitingWord
	}
	return ""
}

// waitingWord is the verdict cell of a sensor with no verdict yet: no
// usage recorded and no checkpoint to compare from.
const waitingWord = "waiting"

// waits: consumer-usage has not checkpointed the sensor yet and recorded
// nothing of it, so there is nothing to compare.
func waits(r board.UsageRow) bool {
	return r.NoWindow && (r.Recorded == nil || r.Recorded.Records == 0)
}

// allWaiting: every sensor is waiting for its first checkpoint, so the
// total has no verdict yet either.
func (p Panel) allWaiting() bool {
	for _, r := range p.State.Rows {
		if r.Verdict != board.VerdictNone || !waits(r) {
			return false
		}
	}
	return len(p.State.Rows) > 0
}

// row is one sensor's cells, in the order of cols.
func (p Panel) row(r board.UsageRow, base lipgloss.Style, cols []common.Column) []common.Cell {
	st := p.Styles
	dash := common.Styled("—", st.Muted)
	cell := map[string]common.Cell{colSensor.Title: common.Styled(r.SensorID, base)}
	for _, c := range cols[1:] {
		cell[c.Title] = dash
	}
	cell[colVerdict.Title] = common.Cell{}
	num := func(c common.Column, v float64) common.Cell {
		return common.Styled(common.FitNumber(v, c.Width), base)
	}
	if r.Recorded != nil {
		cell[colRecH.Title] = num(colRecH, r.Recorded.Hours())
		cell[colRecKm.Title] = num(colRecKm, r.Recorded.Km())
		cell[colRecs.Title] = common.Styled(common.FitCount(r.Recorded.Records, colRecs.Width), base)
	}
	if r.Expected != nil {
		cell[colExpH.Title] = num(colExpH, r.Expected.Hours())
		cell[colExpKm.Title] = num(colExpKm, r.Expected.Km())
	}
	if r.Drift != nil {
		ds := st.Level(r.Verdict.Level())
		if r.Verdict == board.VerdictExact {
			ds = base
		}
		cell[colDriftH.Title] = common.Styled(common.FitSigned2(r.Drift.HoursCents, colDriftH.Width), ds)
		cell[colDriftKm.Title] = common.Styled(common.FitSigned2(r.Drift.KmCents, colDriftKm.Width), ds)
		word := string(r.Verdict)
		if s, ok := verdictWord[r.Verdict]; ok {
			word = s
		}
		cell[colVerdict.Title] = common.Styled(word, st.Level(r.Verdict.Level()))
	} else if r.Verdict != board.VerdictNone { // pending: the audit has not read as far as the records
		cell[colVerdict.Title] = common.Styled(string(r.Verdict), st.Level(r.Verdict.Level()))
	} else if waits(r) {
		// consumer-usage has not checkpointed the sensor yet: nothing
		// recorded, nothing to compare, no verdict yet.
		cell[colVerdict.Title] = common.Styled(waitingWord, st.Muted)
	} else if r.NoWindow {
		cell[colVerdict.Title] = common.Styled("no window", st.Muted)
	} else if r.SensorID == "total" && p.allWaiting() {
		cell[colVerdict.Title] = common.Styled(waitingWord, st.Muted)
	} else if r.Recorded == nil && r.SensorID != "total" {
		cell[colVerdict.Title] = common.Styled("no answer", st.Muted)
	}
	out := make([]common.Cell, len(cols))
	for i, c := range cols {
		out[i] = cell[c.Title]
	}
	return out
}

// statusLine says whether the recorded totals are live: consumer-query
// must answer and consumer-usage, which writes them, must be running.
func (p Panel) statusLine(width int) string {
	st, v := p.Styles, p.State
	title := ""
	if p.Compact {
		title = "Usage"
	}
	status, text := v.Status, v.Reason
	if p.Compact {
		text = strings.NewReplacer("consumer-query is ", "query ", "consumer-query answers an error: ", "query error: ",
			"consumer-query's", "query's").Replace(text)
		text = strings.TrimSuffix(text, ": no answers until it is back")
	}
	if v.Status == board.Waiting {
		text = strings.TrimPrefix(text, "waiting ") // "WAITING for …"
	}
	if v.Status == board.Live {
		text = "recorded by consumer-usage"
		if p.Compact {
			text = "recorded"
		}
		if w := p.Writer; p.HasWriter && w.State != board.Running {
			// consumer-query answers, but nothing new is recorded.
			status, text = board.Waiting, "consumer-usage "+w.StateLabel
			if !w.Alive || w.State == board.Crashing || w.State == board.Stopping {
				status, text = board.Down, "consumer-usage "+w.StateLabel+": totals frozen"
			}
			if p.Compact {
				text = strings.Replace(strings.TrimPrefix(text, "consumer-"), "totals frozen", "frozen", 1)
			}
		}
	}
	word := common.StatusWord(st, status, title)
	truth := v.TruthReason
	if v.Truth == board.Live {
		truth = fmt.Sprintf("audit: %s msgs", common.Count(v.AuditCount))
		if p.Compact && p.Invalid > 0 {
			truth = "audit: " + common.Count(v.AuditCount) // room for the invalid count
		}
		if v.AuditSkipped > 0 {
			truth += fmt.Sprintf(", %s deleted unread", common.Count(v.AuditSkipped))
		}
	}
	line := word + " " + text
	if v.Status == board.Live || v.Truth != board.Live {
		line += " · " + st.Freshness(v.Truth).UnsetBold().Render(truth)
	}
	if p.Compact && p.Invalid > 0 {
		// No box title to carry it.
		line += " · " + st.Warn.Render(fmt.Sprintf("%d invalid", p.Invalid))
	}
	return common.Fit(line, width)
}
