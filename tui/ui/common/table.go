package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"
)

// Align is a column's alignment: numbers go right.
type Align int

const (
	Left Align = iota
	Right
)

// Column describes one table column of a fixed width: a layout decides its
// columns once per terminal size, so nothing moves or disappears when a
// value grows or a state changes.
type Column struct {
	Title string
	Align Align
	// Width is the column's width in cells, without the gap before it.
	Width int
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

// TableWidth is the width of a table of these columns: their widths plus
// one space between columns.
func TableWidth(cols []Column) int {
	w := 0
	for _, c := range cols {
		w += c.Width
	}
	return w + max(0, len(cols)-1)
}

// Table renders rows in fixed-width columns with lipgloss/table: one space
// between columns, a cell longer than its column is cut with an ellipsis.
// rowStyle (may be nil) gives a style layered under every cell of a row
// (selection). It returns the header line and one line per row, each
// exactly width cells wide (padded or cut after the last column).
func Table(cols []Column, rows [][]Cell, width int, header lipgloss.Style, rowStyle func(i int) *lipgloss.Style) (string, []string) {
	titles := make([]string, len(cols))
	for c, col := range cols {
		titles[c] = col.Title
	}
	data := make([][]string, len(rows))
	for i, r := range rows {
		data[i] = make([]string, len(cols))
		for c := range cols {
			if c < len(r) {
				data[i][c] = ansi.Truncate(r[c].Text, cols[c].Width, "…")
			}
		}
	}
	style := func(row, c int) lipgloss.Style {
		col := cols[c]
		var st lipgloss.Style
		switch {
		case row == table.HeaderRow:
			st = header
		case c < len(rows[row]):
			st = rows[row][c].Style
		}
		if row != table.HeaderRow && rowStyle != nil {
			if base := rowStyle(row); base != nil {
				st = st.Inherit(*base)
			}
		}
		w := col.Width
		if c > 0 {
			w++ // the gap before the column, inside the cell so a row style covers it
			st = st.PaddingLeft(1)
		}
		align := lipgloss.Left
		if col.Align == Right {
			align = lipgloss.Right
		}
		return st.Width(w).Align(align)
	}
	t := table.New().
		Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).BorderRow(false).
		Headers(titles...).Rows(data...).
		StyleFunc(style).
		Width(TableWidth(cols))
	lines := Lines(t.Render())
	out := make([]string, 0, len(rows)+1)
	for i := 0; i <= len(rows); i++ {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		var base *lipgloss.Style
		if i > 0 && rowStyle != nil {
			base = rowStyle(i - 1)
		}
		if pad := width - lipgloss.Width(l); pad > 0 && base != nil {
			l += base.Render(strings.Repeat(" ", pad))
		}
		out = append(out, Fit(l, width))
	}
	return out[0], out[1:]
}
