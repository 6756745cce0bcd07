package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Align is a column's alignment: numbers go right.
type Align int

const (
	Left Align = iota
	Right
)

// Column describes one table column.
type Column struct {
	Title string
	Align Align
	// Drop orders what goes when the table is too wide: the highest Drop
	// goes first; 0 is never dropped.
	Drop int
	// Flex columns may be cut (with an ellipsis) down to Min cells after
	// every droppable column is gone.
	Flex bool
	Min  int
}

// Cell is one table cell; a zero Style renders plain.
type Cell struct {
	Text  string
	Style lipgloss.Style
}

// Plain is a cell without style.
func Plain(s string) Cell { return Cell{Text: s} }

// Styled is a cell with a style.
func Styled(s string, st lipgloss.Style) Cell { return Cell{Text: s, Style: st} }

// Table lays rows out in columns fitting width: natural widths (widest of
// title and cells), two spaces between columns when they fit, else one,
// then dropping columns by Drop, then cutting Flex columns. rowStyle (may
// be nil) gives a style layered under every cell of a row (selection).
// It returns the header line and one line per row, each exactly width
// cells wide.
func Table(cols []Column, rows [][]Cell, width int, header lipgloss.Style, rowStyle func(i int) *lipgloss.Style) (string, []string) {
	n := len(cols)
	natural := make([]int, n)
	for c, col := range cols {
		natural[c] = lipgloss.Width(col.Title)
		for _, r := range rows {
			if c < len(r) {
				natural[c] = max(natural[c], lipgloss.Width(r[c].Text))
			}
		}
	}
	keep := make([]bool, n)
	for c := range keep {
		keep[c] = true
	}
	widths := append([]int(nil), natural...)
	total := func(gap int) int {
		sum, k := 0, 0
		for c := range cols {
			if keep[c] {
				sum += widths[c]
				k++
			}
		}
		return sum + gap*max(0, k-1)
	}
	// Columns before spacing: drop only what does not fit with one space
	// between columns, then use two if they fit.
	gap := 1
	for total(gap) > width {
		worst := -1
		for c, col := range cols {
			if keep[c] && col.Drop > 0 && (worst < 0 || col.Drop > cols[worst].Drop) {
				worst = c
			}
		}
		if worst < 0 {
			break
		}
		keep[worst] = false
	}
	if total(2) <= width {
		gap = 2
	}
	for c, col := range cols {
		if over := total(gap) - width; over > 0 && keep[c] && col.Flex {
			widths[c] = max(col.Min, widths[c]-over)
		}
	}

	render := func(cells []Cell, base *lipgloss.Style) string {
		var b strings.Builder
		first := true
		for c, col := range cols {
			if !keep[c] {
				continue
			}
			if !first {
				sep := strings.Repeat(" ", gap)
				if base != nil {
					sep = base.Render(sep)
				}
				b.WriteString(sep)
			}
			first = false
			var cell Cell
			if c < len(cells) {
				cell = cells[c]
			}
			text := Fit(cell.Text, widths[c])
			if col.Align == Right {
				t := cell.Text
				if lipgloss.Width(t) > widths[c] {
					t = Fit(t, widths[c])
				}
				text = strings.Repeat(" ", widths[c]-lipgloss.Width(t)) + t
			}
			st := cell.Style
			if base != nil {
				st = st.Inherit(*base)
			}
			b.WriteString(st.Render(text))
		}
		return b.String()
	}

	titles := make([]Cell, n)
	for c, col := range cols {
		titles[c] = Styled(col.Title, header)
	}
	head := Fit(render(titles, nil), width)
	lines := make([]string, len(rows))
	for i, r := range rows {
		var base *lipgloss.Style
		if rowStyle != nil {
			base = rowStyle(i)
		}
		line := render(r, base)
		if pad := width - lipgloss.Width(line); pad > 0 && base != nil {
			line += base.Render(strings.Repeat(" ", pad))
		}
		lines[i] = Fit(line, width)
	}
	return head, lines
}
