// Package theme holds the dashboard's styles. Colours come from the
// terminal's 16-colour palette (so a VHS theme or a projector-friendly
// terminal theme decides the exact shades) with a darker variant on light
// backgrounds, and every colour has a meaning: green running / exact, red
// crashed / lost, yellow in-between / over-counted. Views always print a
// word as well, so nothing depends on colour alone.
package theme

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

var (
	green   = lipgloss.AdaptiveColor{Light: "2", Dark: "10"}
	red     = lipgloss.AdaptiveColor{Light: "1", Dark: "9"}
	yellow  = lipgloss.AdaptiveColor{Light: "3", Dark: "11"}
	cyan    = lipgloss.AdaptiveColor{Light: "6", Dark: "14"}
	magenta = lipgloss.AdaptiveColor{Light: "5", Dark: "13"}
	gray    = lipgloss.AdaptiveColor{Light: "8", Dark: "7"}
)

// Styles is every style a view uses. All of them come from one
// lipgloss.Renderer (see New), so a session's colour profile and
// background decide every colour the views print: views and components
// build no style of their own but from these (NewStyle for a plain one).
type Styles struct {
	Good, Warn, Bad, Info, Action, Muted lipgloss.Style

	Strong lipgloss.Style // bold without colour: addresses, names, totals

	App       lipgloss.Style // the product name in the header
	Title     lipgloss.Style // panel titles
	Border    lipgloss.Style // box lines
	Header    lipgloss.Style // table column titles
	Selected  lipgloss.Style // the selected process row
	Stale     lipgloss.Style // values that are not live
	Key       lipgloss.Style // key names in help
	KeyDesc   lipgloss.Style
	Separator lipgloss.Style

	ProgressFull, ProgressEmpty string // colours for the replay bar

	r *lipgloss.Renderer
}

// New returns the dashboard's styles built from r (r.NewStyle), so r's
// colour profile and background detection govern them: one renderer per
// SSH session. A nil r is lipgloss's default renderer.
func New(r *lipgloss.Renderer) *Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	s := r.NewStyle
	return &Styles{
		Good:          s().Foreground(green).Bold(true),
		Warn:          s().Foreground(yellow).Bold(true),
		Bad:           s().Foreground(red).Bold(true),
		Info:          s(),
		Action:        s().Foreground(magenta).Bold(true),
		Muted:         s().Foreground(gray),
		Strong:        s().Bold(true),
		App:           s().Foreground(cyan).Bold(true),
		Title:         s().Foreground(cyan).Bold(true),
		Border:        s().Foreground(gray),
		Header:        s().Bold(true).Underline(true),
		Selected:      s().Reverse(true).Bold(true),
		Stale:         s().Foreground(gray).Faint(true),
		Key:           s().Foreground(cyan).Bold(true),
		KeyDesc:       s(),
		Separator:     s().Foreground(gray),
		ProgressFull:  "11",
		ProgressEmpty: "8",
		r:             r,
	}
}

// Renderer is the renderer the styles come from (lipgloss's default one
// for Styles not made by New).
func (st *Styles) Renderer() *lipgloss.Renderer {
	if st == nil || st.r == nil {
		return lipgloss.DefaultRenderer()
	}
	return st.r
}

// NewStyle is an empty style of the same renderer, for a view that needs
// one of its own (an alignment, a width).
func (st *Styles) NewStyle() lipgloss.Style { return st.Renderer().NewStyle() }

// Level returns the style for a board level.
func (st *Styles) Level(l board.Level) lipgloss.Style {
	switch l {
	case board.LevelGood:
		return st.Good
	case board.LevelWarn:
		return st.Warn
	case board.LevelBad:
		return st.Bad
	case board.LevelAction:
		return st.Action
	case board.LevelMuted:
		return st.Muted
	}
	return st.Info
}

// Freshness returns the style for a panel's status line.
func (st *Styles) Freshness(f board.Freshness) lipgloss.Style {
	switch f {
	case board.Live:
		return st.Good
	case board.Rebuilding, board.Waiting, board.Stale:
		return st.Warn
	}
	return st.Bad
}
