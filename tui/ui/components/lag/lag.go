// Package lag renders consumer lag: a value per process in words, and a
// panel with one line per process (aligned with the process table's rows)
// holding the value and a sparkline of the last minute.
package lag

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// ValueWidth is the width of a lag value: "no Kafka lag", "12,345 stale".
const ValueWidth = 12

// A sparkline covers the last minute at every terminal size: Bars bars of
// PerBar one-second samples, or, where the width allows, WideBars bars of
// one sample each.
const (
	Bars     = 10
	PerBar   = 6
	WideBars = 60
	// Width is the panel's width with Bars: the value, a space and the bars.
	Width = ValueWidth + 1 + Bars
)

// WidthFor is the panel's width with bars bars.
func WidthFor(bars int) int { return ValueWidth + 1 + bars }

// Text is a process's lag in words, and how good or bad it is.
//   - consumer-usage: messages between the high watermark and its committed
//     offsets; "≥N" when some partitions have no commit yet (Note says so).
//   - consumer-current: from its own positions; "— down" while it is dead.
//   - consumer-query: "no Kafka lag"; producer: messages sent.
func Text(p board.ProcView) (string, board.Level) {
	l := p.Lag
	if !l.Applies {
		switch role.Lookup(p.Name).Lag {
		case role.LagSent:
			return sentText(p)
		case role.LagNotKafka:
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
		s, level = "no commit", board.LevelWarn
	case len(l.Unknown) > 0:
		s, level = "≥"+common.Count(l.Messages), board.LevelWarn
	default:
		// Its size alone says little: one interval's messages in flight is
		// a consumer keeping up. The status (judged over 10 s) says more.
		s, level = common.Count(l.Messages), statusLevel[p.LagStatus]
	}
	if l.Messages > 0 && !p.Alive {
		level = board.LevelBad // growing while nobody consumes
	}
	if l.Stale {
		s += " stale"
	} else if w := string(p.LagStatus); w != "" && lipgloss.Width(s)+1+len(w) <= ValueWidth {
		s += " " + w
	}
	return s, level
}

// statusLevel is how a lag status looks; unjudged (its first seconds) is
// plain.
var statusLevel = map[board.LagStatus]board.Level{
	board.LagUnjudged: board.LevelInfo,
	board.LagOK:       board.LevelGood,
	board.LagWarn:     board.LevelWarn,
	board.LagStall:    board.LevelBad,
	board.LagStop:     board.LevelBad,
}

// sentText is the producer's messages sent, "— down" while it is dead.
func sentText(p board.ProcView) (string, board.Level) {
	if !p.Alive {
		return "— down", board.LevelMuted
	}
	level := board.LevelInfo
	if p.Producer.Paused {
		level = board.LevelWarn // the state column says paused
	}
	sent := common.Count(p.Producer.Produced) + " sent"
	if len([]rune(sent)) > ValueWidth {
		sent = common.FitCount(p.Producer.Produced, ValueWidth-5) + " sent"
	}
	return sent, level
}

// Note explains a lag that is not a plain number, "" when it is one:
// "lag ≥682: no commit yet on partition 2" (whose lag is unknown).
func Note(p board.ProcView) string {
	l := p.Lag
	if !l.Applies || l.Down || l.NoData || len(l.Unknown) == 0 {
		return ""
	}
	parts := make([]string, len(l.Unknown))
	for i, u := range l.Unknown {
		parts[i] = fmt.Sprint(u)
	}
	which := "partition " + strings.Join(parts, ", ")
	if len(parts) > 1 {
		which = "partitions " + strings.Join(parts, ", ")
	}
	if l.Messages == 0 {
		return "lag unknown: no commit yet on " + which
	}
	return fmt.Sprintf("lag ≥%s: no commit yet on %s", common.Count(l.Messages), which)
}

// ShortNote is Note for the compact layout: "≥682: no commit on p2".
func ShortNote(p board.ProcView) string {
	l := p.Lag
	if Note(p) == "" {
		return ""
	}
	parts := make([]string, len(l.Unknown))
	for i, u := range l.Unknown {
		parts[i] = fmt.Sprintf("p%d", u)
	}
	if l.Messages == 0 {
		return "no commit on " + strings.Join(parts, ",")
	}
	return fmt.Sprintf("≥%s: no commit on %s", common.Count(l.Messages), strings.Join(parts, ","))
}

// Panel is the lag column block: a header line and one line per process,
// Width wide.
type Panel struct {
	Styles *theme.Styles
	Procs  []board.ProcView
	// Bars is the sparkline's bars: Bars (0) or WideBars.
	Bars int
	// Floor is the least a full bar stands for (common.SparkFloor).
	Floor int64
}

// View renders the header and the rows: the value, and for consumers the
// last minute of lag (its legend is in the box's title, common.SparkLegend).
func (p Panel) View(width, height int) string {
	st := p.Styles
	bars := p.Bars
	if bars <= 0 {
		bars = Bars
	}
	perBar := Bars * PerBar / bars
	lines := []string{st.Header.Render(pad("lag", ValueWidth)) + " " + st.Header.Render(common.Fit("last 60 s", bars))}
	for _, pv := range p.Procs {
		t, lv := Text(pv)
		line := st.Level(lv).Render(pad(ansi.Truncate(t, ValueWidth, "…"), ValueWidth))
		if pv.Lag.Applies {
			line += " " + st.Level(lv).UnsetBold().Render(common.Sparkline(withNow(pv), bars, perBar, p.Floor))
		}
		lines = append(lines, line)
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}

// withNow is the row's samples with the value beside them as the newest:
// a sample is taken once a second, the value at every frame, and the
// rightmost bar must agree with the value.
func withNow(pv board.ProcView) []int64 {
	if len(pv.History) == 0 {
		return nil
	}
	now := int64(-1)
	if pv.Lag.Known() {
		now = pv.Lag.Messages
	}
	return append(slices.Clip(pv.History), now)
}

// pad right-aligns a value.
func pad(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}
