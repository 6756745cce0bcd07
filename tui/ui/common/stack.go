package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Stack joins areas drawn as boxes one under the other. Where a box's
// bottom border meets the next box's top border the two become one line
// (├ ┬ ┴ ┼ ┤ where the edges meet): each join gives the panels a line, and
// on a projector's 36 lines every line counts. The result is one line per
// join shorter than the areas' heights added up.
func Stack(st *theme.Styles, areas ...string) string {
	var out []string
	for _, a := range areas {
		lines := Lines(a)
		if n := len(out); n > 0 && len(lines) > 0 && isBorder(out[n-1], '╰', '╯') && isBorder(lines[0], '╭', '╮') {
			out[n-1] = joinBorders(st, out[n-1], lines[0])
			lines = lines[1:]
		}
		out = append(out, lines...)
	}
	return strings.Join(out, "\n")
}

// isBorder: line is a box's top (╭…╮) or bottom (╰…╯) border, or several
// boxes' side by side.
func isBorder(line string, left, right rune) bool {
	r := []rune(ansi.Strip(line))
	return len(r) >= 2 && r[0] == left && r[len(r)-1] == right
}

// joinBorders is the lower border line with the upper one's corners drawn
// into it. A line whose cells are not one rune each (a wide rune in a
// title) is kept as the lower line alone: the frame keeps its size.
func joinBorders(st *theme.Styles, upper, lower string) string {
	u, l := []rune(ansi.Strip(upper)), []rune(ansi.Strip(lower))
	if len(u) != len(l) || lipgloss.Width(lower) != len(l) {
		return lower
	}
	var b strings.Builder
	from := 0
	for i := range l {
		j, ok := joint(u[i], l[i])
		if !ok {
			continue
		}
		b.WriteString(ansi.Cut(lower, from, i))
		b.WriteString(st.Border.Render(string(j)))
		from = i + 1
	}
	b.WriteString(ansi.Cut(lower, from, len(l)))
	return b.String()
}

// joint is the character where an upper border's cell meets a lower
// one's, when it differs from the lower's.
func joint(up, low rune) (rune, bool) {
	upCorner := up == '╰' || up == '╯'
	lowCorner := low == '╭' || low == '╮'
	switch {
	case up == '╰' && low == '╭':
		return '├', true
	case up == '╯' && low == '╮':
		return '┤', true
	case upCorner && lowCorner:
		return '┼', true
	case up == '─' && lowCorner:
		return '┬', true
	case (upCorner || up == '┴') && low == '─':
		return '┴', true
	}
	return low, false
}

// Beside joins two boxes of the same height side by side on one shared
// border: the left's right edge is dropped and the right's left edge
// meets the corners (┬ at the top, ┴ at the bottom).
func Beside(st *theme.Styles, left, right string) string {
	ll, rl := Lines(left), Lines(right)
	if len(ll) != len(rl) {
		return lipgloss.JoinHorizontal(lipgloss.Top, left, right)
	}
	out := make([]string, len(ll))
	for i := range ll {
		lw, rw := lipgloss.Width(ll[i]), lipgloss.Width(rl[i])
		edge := []rune(ansi.Strip(ansi.Cut(rl[i], 0, 1)))
		j := '│'
		switch {
		case len(edge) == 1 && edge[0] == '╭':
			j = '┬'
		case len(edge) == 1 && edge[0] == '╰':
			j = '┴'
		}
		out[i] = ansi.Cut(ll[i], 0, lw-1) + st.Border.Render(string(j)) + ansi.Cut(rl[i], 1, rw)
	}
	return strings.Join(out, "\n")
}
