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
// totals row.
type Panel struct {
	Styles  *theme.Styles
	State   board.UsageView
	Compact bool
}

// New builds the panel.
func New(st *theme.Styles, v board.UsageView, compact bool) Panel {
	return Panel{Styles: st, State: v, Compact: compact}
}

// Title is the box title.
func Title() string { return "Usage · consumer-query vs audit" }

var shortVerdict = map[board.Verdict]string{
	board.VerdictOver: "over",
}

// View renders the panel in width×height.
func (p Panel) View(width, height int) string {
	st, v := p.Styles, p.State
	lines := []string{p.statusLine(width)}
	cols := []common.Column{
		{Title: "sensor"},
		{Title: "rec h", Align: common.Right, Drop: 2},
		{Title: "exp h", Align: common.Right, Drop: 3},
		{Title: "drift h", Align: common.Right},
		{Title: "rec km", Align: common.Right, Drop: 4},
		{Title: "exp km", Align: common.Right, Drop: 5},
		{Title: "drift km", Align: common.Right},
		{Title: "recs", Align: common.Right, Drop: 6},
		{Title: "verdict"},
	}
	if len(v.Rows) == 0 {
		msg := "  no usage yet"
		if v.Truth != board.Live {
			msg = "  " + v.TruthReason
		}
		return strings.Join(common.FitLines(append(lines, "", st.Muted.Render(msg)), width, height), "\n")
	}
	rows := make([][]common.Cell, 0, len(v.Rows)+1)
	for _, r := range v.Rows {
		rows = append(rows, p.row(r, lipgloss.NewStyle()))
	}
	total := p.row(v.Total, lipgloss.NewStyle().Bold(true))
	head, body := common.Table(cols, append(rows, total), width, st.Header, nil)
	totalLine, body := body[len(body)-1], body[:len(body)-1]
	lines = append(lines, head)
	lines = append(lines, common.Clip(body, height-3, func(n int) string {
		return st.Muted.Render(fmt.Sprintf("  … %d more sensors", n))
	})...)
	lines = append(lines, totalLine)
	return strings.Join(common.FitLines(lines, width, height), "\n")
}

func (p Panel) row(r board.UsageRow, base lipgloss.Style) []common.Cell {
	st := p.Styles
	dash := common.Styled("—", st.Muted)
	cells := []common.Cell{common.Styled(r.SensorID, base), dash, dash, dash, dash, dash, dash, dash, {}}
	if r.Recorded != nil {
		cells[1] = common.Styled(common.Fixed2(r.Recorded.Hours), base)
		cells[4] = common.Styled(common.Fixed2(r.Recorded.Km), base)
		cells[7] = common.Styled(common.Count(r.Recorded.Records), base)
	}
	if r.Expected != nil {
		cells[2] = common.Styled(common.Fixed2(r.Expected.Hours), base)
		cells[5] = common.Styled(common.Fixed2(r.Expected.Km), base)
	}
	if r.Drift != nil {
		ds := st.Level(r.Verdict.Level())
		if r.Verdict == board.VerdictExact {
			ds = base
		}
		cells[3] = common.Styled(common.Signed2(r.Drift.HoursCents), ds)
		cells[6] = common.Styled(common.Signed2(r.Drift.KmCents), ds)
		word := string(r.Verdict)
		if s, ok := shortVerdict[r.Verdict]; ok && p.Compact {
			word = s
		}
		cells[8] = common.Styled(word, st.Level(r.Verdict.Level()))
	} else if r.Verdict != board.VerdictNone { // pending: the audit has not read as far as the records
		cells[8] = common.Styled(string(r.Verdict), st.Level(r.Verdict.Level()))
	} else if r.NoWindow {
		cells[8] = common.Styled("no window", st.Muted)
	} else if r.Recorded == nil && r.SensorID != "total" {
		cells[8] = common.Styled("no answer", st.Muted)
	}
	return cells
}

func (p Panel) statusLine(width int) string {
	st, v := p.Styles, p.State
	title := ""
	if p.Compact {
		title = "Usage"
	}
	word := common.StatusWord(st, v.Status, title)
	text := v.Reason
	if p.Compact {
		text = strings.TrimPrefix(text, "consumer-query is ")
	}
	if v.Status == board.Live {
		text = "recorded by consumer-usage"
		if p.Compact {
			text = "recorded"
		}
	}
	truth := v.TruthReason
	if v.Truth == board.Live {
		truth = fmt.Sprintf("audit: %s msgs", common.Count(v.AuditCount))
	}
	line := word + " " + text
	if v.Status == board.Live || v.Truth != board.Live {
		line += " · " + st.Freshness(v.Truth).UnsetBold().Render(truth)
	}
	return common.Fit(line, width)
}
