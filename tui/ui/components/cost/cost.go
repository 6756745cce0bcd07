// Package cost renders what consumer-current's rebuilds cost: a chart of
// the time to caught_up against the history the topic held (one series
// per strategy, the history on a log scale: each step of the rebuild-cost
// scenario is ten times the last), with the figures beside it.
package cost

import (
	"fmt"
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Title is the panel's title.
func Title() string { return "Rebuild cost · time to caught_up against the topic's history" }

// Panel is the chart and the figures.
type Panel struct {
	Styles *theme.Styles
	View   board.CostView
}

// series is how a strategy is drawn: its marker (readable without
// colour) and its style.
type series struct {
	method string
	marker rune
	style  lipgloss.Style
}

func (p Panel) series() []series {
	st := p.Styles
	return []series{
		{string(lesson.Replay), '●', st.Warn},
		{string(lesson.Snapshot), '■', st.Good},
		{string(lesson.Changelog), '▲', st.Title},
	}
}

// figuresWidth is the figures' width: history and the three strategies.
const figuresWidth = 11 + 3*10

// minChart is the least width the chart is drawn in; below it only the
// figures show.
const minChart = 24

// Lines is the panel in at most height lines of width cells.
func (p Panel) Lines(width, height int) []string {
	st := p.Styles
	if len(p.View.Points) == 0 {
		return common.FitLines([]string{st.Muted.Render(" no rebuild measured yet: each start of consumer-current is one")}, width, height)
	}
	figures := p.figures(height)
	chartW := width - figuresWidth - 2
	if chartW < minChart {
		return common.FitLines(figures, width, height)
	}
	chart := p.chart(chartW, height)
	out := make([]string, height)
	for i := range out {
		var l, r string
		if i < len(chart) {
			l = chart[i]
		}
		if i < len(figures) {
			r = figures[i]
		}
		out[i] = common.Fit(l, chartW) + "  " + common.Fit(r, figuresWidth)
	}
	return common.FitLines(out, width, height)
}

// figures is the table beside the chart: the time to caught_up, then
// the records read, per history and strategy (the latest rebuild of each).
func (p Panel) figures(height int) []string {
	st := p.Styles
	rows := p.View.Rows
	// Two blocks of a title and the rows: the latest histories that fit.
	if keep := max(1, (height-2)/2); len(rows) > keep {
		rows = rows[len(rows)-keep:]
	}
	head := fmt.Sprintf("%10s", "history")
	for _, s := range p.series() {
		head += fmt.Sprintf(" %9s", s.method)
	}
	block := func(title string, cell func(board.RebuildRun) string) []string {
		out := []string{st.Header.Render(common.Fit(title, figuresWidth))}
		for _, r := range rows {
			line := fmt.Sprintf("%10s", board.Count(r.History))
			for _, s := range p.series() {
				v := "—"
				if run, ok := r.ByMethod[s.method]; ok {
					v = cell(run)
				}
				line += " " + s.style.Render(fmt.Sprintf("%9s", v))
			}
			out = append(out, line)
		}
		return out
	}
	times := block("time to caught_up", func(r board.RebuildRun) string { return board.Millis(r.Millis) })
	reads := block("records read", func(r board.RebuildRun) string { return board.Count(r.RecordsRead()) })
	if 1+len(times)+len(reads) > height {
		times = times[1:] // the columns' header says it
	}
	return append(append([]string{st.Header.Render(head)}, times...), reads...)
}

// chart is the line chart, its history labels and its legend.
func (p Panel) chart(width, height int) []string {
	st := p.Styles
	pts := p.View.Points
	minX, maxX := math.Inf(1), math.Inf(-1)
	var maxY float64
	for _, r := range pts {
		x := math.Log10(float64(max(r.History, 1)))
		minX, maxX = math.Min(minX, x), math.Max(maxX, x)
		maxY = math.Max(maxY, float64(r.Millis))
	}
	pad := math.Max((maxX-minX)*0.08, 0.3)
	minX, maxX = minX-pad, maxX+pad
	maxY = niceCeil(maxY * 1.1)
	h := max(height-2, 3)
	lc := linechart.New(width, h, minX, maxX, 0, maxY,
		linechart.WithXYSteps(0, 2),
		linechart.WithStyles(st.Border, st.Muted, st.Info),
		linechart.WithYLabelFormatter(func(_ int, v float64) string { return board.Millis(int64(math.Round(v))) }),
	)
	lc.DrawXYAxisAndLabel()
	point := func(r board.RebuildRun) canvas.Float64Point {
		return canvas.Float64Point{X: math.Log10(float64(max(r.History, 1))), Y: float64(r.Millis)}
	}
	for _, s := range p.series() {
		var mine []board.RebuildRun
		for _, r := range pts {
			if r.Method() == s.method {
				mine = append(mine, r)
			}
		}
		sortByHistory(mine)
		for i := 1; i < len(mine); i++ {
			lc.DrawBrailleLineWithStyle(point(mine[i-1]), point(mine[i]), s.style)
		}
	}
	// The markers last, the replay's on top; snapshot and changelog side
	// by side, a cell apart, where their times are alike.
	cell := (maxX - minX) / float64(max(lc.GraphWidth(), 1))
	dodge := map[string]float64{string(lesson.Snapshot): -cell, string(lesson.Changelog): cell}
	ss := p.series()
	for i := len(ss) - 1; i >= 0; i-- {
		for _, r := range pts {
			if r.Method() == ss[i].method {
				at := point(r)
				at.X += dodge[ss[i].method]
				lc.DrawRuneWithStyle(at, ss[i].marker, ss[i].style)
			}
		}
	}
	lines := common.Lines(lc.View())
	lines = append(lines, p.historyLabels(&lc, width))
	var legend []string
	for _, s := range p.series() {
		legend = append(legend, s.style.Render(string(s.marker)+" "+s.method))
	}
	return append(lines, " "+strings.Join(legend, "  ")+st.Muted.Render("  · history →"))
}

// historyLabels is the line under the chart: each row's history under its
// place on the axis ("10k", "100k", "1M").
func (p Panel) historyLabels(lc *linechart.Model, width int) string {
	line := []rune(strings.Repeat(" ", width))
	free := 0
	for _, row := range p.View.Rows {
		s := []rune(shortCount(row.History))
		at := lc.ScaleFloat64Point(canvas.Float64Point{X: math.Log10(float64(max(row.History, 1)))})
		col := lc.Origin().X + 1 + int(math.Round(at.X)) - len(s)/2
		col = max(col, free)
		if col+len(s) > width {
			continue
		}
		copy(line[col:], s)
		free = col + len(s) + 1
	}
	return p.Styles.Muted.Render(string(line))
}

// shortCount is 10k, 100k, 1M, 2.5M.
func shortCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	case n >= 1000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	}
	return fmt.Sprint(n)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 10).
func niceCeil(v float64) float64 {
	if v <= 10 {
		return 10
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func sortByHistory(rs []board.RebuildRun) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].History < rs[j-1].History; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
