// Package lag renders consumer lag: a value per process in words, and a
// panel with one line per process (aligned with the process table's rows)
// holding the value and a sparkline of its recent history.
package lag

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Text is a process's lag in words, and how good or bad it is.
//   - consumer-usage: messages between the high watermark and its committed
//     offsets; "≥N +?" when some partitions have no commit yet.
//   - consumer-current: from its own positions; "— down" while it is dead.
//   - consumer-query: "no Kafka lag"; producer: messages sent, or paused.
func Text(p board.ProcView) (string, board.Level) {
	l := p.Lag
	if !l.Applies {
		switch p.Name {
		case board.Producer:
			if !p.Alive {
				return "— down", board.LevelMuted
			}
			sent := common.Count(p.Produced) + " sent"
			if p.Paused {
				return "paused, " + sent, board.LevelWarn
			}
			return sent, board.LevelInfo
		case board.Query:
			return "no Kafka lag", board.LevelMuted
		}
		return "", board.LevelInfo
	}
	var s string
	level := board.LevelGood
	switch {
	case l.Down:
		return "— down", board.LevelMuted
	case l.NoData:
		return "…", board.LevelMuted
	case len(l.Unknown) > 0 && l.Messages == 0:
		s, level = "? no commit", board.LevelWarn
	case len(l.Unknown) > 0:
		s, level = fmt.Sprintf("≥%s +?", common.Count(l.Messages)), board.LevelWarn
	default:
		s = common.Count(l.Messages)
		if l.Messages > 0 {
			level = board.LevelWarn
		}
	}
	if l.Messages > 0 && !p.Alive {
		level = board.LevelBad // growing while nobody consumes
	}
	if l.Stale {
		s += " stale"
	}
	return s, level
}

// sparkFloor is the smallest full-scale of a sparkline: two seconds of the
// default producer (10 sensors, 1 message each per second).
const sparkFloor = 20

// Panel is the lag column block: a header line and one line per process.
type Panel struct {
	Styles *theme.Styles
	Procs  []board.ProcView
}

// View renders the header and the rows; sparklines take what width is left
// after the values.
func (p Panel) View(width, height int) string {
	type row struct {
		text  string
		level board.Level
		hist  []int64
		spark bool
	}
	rows := make([]row, len(p.Procs))
	valW := lipgloss.Width("lag")
	for i, pv := range p.Procs {
		t, lv := Text(pv)
		rows[i] = row{text: t, level: lv, hist: pv.History, spark: pv.Lag.Applies}
		valW = max(valW, lipgloss.Width(t))
	}
	sparkW := width - valW - 1
	title := "history"
	if sparkW >= 22 {
		title = "history (1 per poll)"
	}
	lines := []string{p.Styles.Header.Render(pad("lag", valW)) + " " + p.Styles.Header.Render(common.Fit(title, max(0, sparkW)))}
	for _, r := range rows {
		line := p.Styles.Level(r.level).Render(pad(r.text, valW))
		if r.spark && sparkW > 0 {
			line += " " + p.Styles.Level(r.level).UnsetBold().Render(common.Sparkline(r.hist, sparkW, sparkFloor))
		}
		lines = append(lines, line)
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}

// pad right-aligns a value.
func pad(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}
