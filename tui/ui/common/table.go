package common

import (
	"reflect"
	"strings"

	"github.com/charmbracelet/lipgloss"
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

// Stretch widens the right-aligned columns (the numbers) so that the table
// is width cells wide: the extra goes evenly into the gaps before the
// numbers, so a wide panel spreads its table instead of leaving the right
// half empty. Columns already as wide as width are returned as they are.
func Stretch(cols []Column, width int) []Column {
	extra := width - TableWidth(cols)
	var numbers []int
	for i, c := range cols {
		if c.Align == Right {
			numbers = append(numbers, i)
		}
	}
	if extra <= 0 || len(numbers) == 0 {
		return cols
	}
	out := append([]Column(nil), cols...)
	for k, i := range numbers {
		out[i].Width += extra / len(numbers)
		if k < extra%len(numbers) {
			out[i].Width++
		}
	}
	return out
}

// Table renders rows in fixed-width columns: one space between columns, a
// cell longer than its column is cut with an ellipsis. rowStyle (may be
// nil) gives a style layered under every cell of a row (selection). It
// returns the header line and one line per row, each exactly width cells
// wide (padded or cut after the last column). The styles Table makes
// itself (a plain cell under a row style, the padding) come from r, the
// renderer of the cells' styles (nil: lipgloss's default renderer).
//
// Each cell is laid out by hand and styled with one Render of its text:
// the dashboard draws after every input it receives, and lipgloss/table
// (which this replaced) was about half of a frame (54% in pprof). The padding gets what
// lipgloss gives its whitespace: a background and reverse video, never an
// underline.
func Table(r *lipgloss.Renderer, cols []Column, rows [][]Cell, width int, header lipgloss.Style, rowStyle func(i int) *lipgloss.Style) (string, []string) {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	titles := make([]Cell, len(cols))
	for c, col := range cols {
		titles[c] = Cell{Text: col.Title, Style: header}
	}
	out := make([]string, 0, len(rows)+1)
	out = append(out, tableLine(r, cols, titles, width, nil))
	for i, row := range rows {
		var base *lipgloss.Style
		if rowStyle != nil {
			base = rowStyle(i)
		}
		out = append(out, tableLine(r, cols, row, width, base))
	}
	return out[0], out[1:]
}

// tableLine is one row of cells, under base (may be nil), width wide.
func tableLine(r *lipgloss.Renderer, cols []Column, cells []Cell, width int, base *lipgloss.Style) string {
	var b strings.Builder
	// lineW counts the cells written while every text is printable ASCII
	// (their width is then exact); otherwise the line is measured.
	lineW, exact := 0, true
	for c, col := range cols {
		var cell Cell
		if c < len(cells) {
			cell = cells[c]
		}
		st := cell.Style
		if base != nil {
			if isPlain(st) {
				// A zero style has no renderer: it would render with
				// the default one.
				st = r.NewStyle()
			}
			st = st.Inherit(*base)
		}
		text := cell.Text
		tw, ascii := asciiWidth(text)
		exact = exact && ascii
		if !ascii || tw > col.Width {
			text = ansi.Truncate(text, col.Width, "…")
			tw = ansi.StringWidth(text)
		}
		pad := max(0, col.Width-tw)
		left, right := 0, pad
		if col.Align == Right {
			left, right = pad, 0
		}
		if c > 0 {
			left++ // the gap before the column belongs to the cell, so a row style covers it
		}
		ws := whitespace(r, st)
		b.WriteString(ws(left))
		switch {
		case text == "":
		case isPlain(st):
			b.WriteString(text)
		default:
			b.WriteString(st.Render(text))
		}
		b.WriteString(ws(right))
		lineW += left + tw + right
	}
	l := b.String()
	if !exact {
		lineW = lipgloss.Width(l)
	}
	if pad := width - lineW; pad > 0 && base != nil {
		l += whitespace(r, *base)(pad)
		lineW += pad
	}
	if exact && lineW == width {
		return l
	}
	return Fit(l, width)
}

// whitespace renders n spaces as lipgloss renders a style's padding.
func whitespace(r *lipgloss.Renderer, st lipgloss.Style) func(n int) string {
	_, noBg := st.GetBackground().(lipgloss.NoColor)
	if !st.GetReverse() && noBg {
		return func(n int) string { return strings.Repeat(" ", n) }
	}
	ws := r.NewStyle().Reverse(st.GetReverse()).Background(st.GetBackground())
	if st.GetReverse() {
		ws = ws.Foreground(st.GetForeground())
	}
	return func(n int) string {
		if n == 0 {
			return ""
		}
		return ws.Render(strings.Repeat(" ", n))
	}
}

// isPlain: a zero style (Plain, or a row's unstyled cells) adds nothing,
// and skipping its Render is most of a plain table's cost.
func isPlain(st lipgloss.Style) bool { return reflect.ValueOf(st).IsZero() }
