// Package common holds what the dashboard's components share: boxes,
// fixed-width tables, number formats, wrapping and sparklines. Every
// component is a value built from state for each frame whose View(width,
// height) fills exactly that many cells. Everything here is a pure function
// of its arguments.
package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Fit truncates s to width cells (with an ellipsis) and pads it with spaces
// to exactly width.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := Width(s)
	if w > width {
		s = ansi.Truncate(s, width, "…")
		w = Width(s)
	}
	if w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// Width is lipgloss.Width: the cells of s's widest line. Printable ASCII
// (most of a frame's text: numbers, names, states) is one cell a byte and
// is counted without ansi's grapheme segmentation, which was a fifth of a
// frame.
func Width(s string) int {
	if n, ok := asciiWidth(s); ok {
		return n
	}
	return lipgloss.Width(s)
}

// asciiWidth is len(s) when s is printable ASCII only (no escape, no
// newline, no control character).
func asciiWidth(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return 0, false
		}
	}
	return len(s), true
}

// FitLines fits every line to width and returns exactly height lines.
func FitLines(lines []string, width, height int) []string {
	out := make([]string, 0, height)
	for i := 0; i < height; i++ {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		out = append(out, Fit(l, width))
	}
	return out
}

// Lines splits a rendered block into lines ("" gives none).
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Box draws a rounded box of exactly width×height with the title set in
// its top border and the body lines inside (cut or padded to fit).
func Box(st *theme.Styles, title string, body []string, width, height int) string {
	if width < 4 || height < 2 {
		return strings.Join(FitLines(body, max(0, width), max(0, height)), "\n")
	}
	inner := width - 2
	b := st.Border
	top := b.Render("╭")
	if title != "" && inner > 4 {
		t := ansi.Truncate(title, inner-4, "…")
		top += b.Render("─ ") + t + b.Render(" "+strings.Repeat("─", max(0, inner-3-lipgloss.Width(t))))
	} else {
		top += b.Render(strings.Repeat("─", inner))
	}
	top += b.Render("╮")
	lines := []string{top}
	side := b.Render("│")
	for _, l := range FitLines(body, inner, height-2) {
		lines = append(lines, side+l+side)
	}
	lines = append(lines, b.Render("╰"+strings.Repeat("─", inner)+"╯"))
	return strings.Join(lines, "\n")
}

// Section is the borderless variant for small terminals: a title line, then
// the body, exactly width×height.
func Section(title string, body []string, width, height int) string {
	lines := append([]string{title}, body...)
	return strings.Join(FitLines(lines, width, height), "\n")
}

// Center places msg in the middle of a width×height area, with r's
// whitespace (nil: lipgloss's default renderer).
func Center(r *lipgloss.Renderer, msg string, width, height int) string {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	return r.Place(width, height, lipgloss.Center, lipgloss.Center, msg)
}

// Shown is how many of n rows a list of height lines shows, and how many
// it does not (more): when all do not fit, the last line says how many more
// there are. A panel renders only the rows shown, so its cost does not grow
// with the number of rows.
func Shown(n, height int) (shown, more int) {
	switch {
	case height <= 0:
		return 0, 0
	case n <= height:
		return n, 0
	}
	return height - 1, n - height + 1
}

// Wrap breaks s into lines of at most width cells at spaces only, so a
// word (a group id such as demo-current-1a2b3c4d, a number) is never split;
// only a word longer than a whole line is cut into pieces. Newlines in s
// are kept.
func Wrap(s string, width int) []string {
	if width <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, lineW := "", 0
		for _, word := range strings.Split(para, " ") {
			ww := lipgloss.Width(word)
			if ww == 0 && word == "" {
				continue
			}
			switch {
			case lineW == 0:
			case lineW+1+ww <= width:
				line, lineW = line+" "+word, lineW+1+ww
				continue
			default:
				out = append(out, line)
			}
			for ww > width { // a word longer than the line
				out = append(out, ansi.Truncate(word, width, ""))
				word = ansi.TruncateLeft(word, width, "")
				ww = lipgloss.Width(word)
			}
			line, lineW = word, ww
		}
		out = append(out, line)
	}
	return out
}
