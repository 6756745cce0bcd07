// Package narration renders guided scenarios: the narration panel (the
// current step, what is said, what to watch, the presenter's key, and the
// checks as their results come in) and the scenario picker.
package narration

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the narration panel of a running (or finished) scenario: the
// action line (the presenter's key, or what is awaited, with a live
// countdown) stays on top, the latest timeline entry at the bottom (the
// narration points at events while it covers the events panel), and
// between them the narration, what to watch and the checks, wrapped at
// words, in a viewport that scrolls.
type Panel struct {
	// OffScript notes a key the presenter pressed that the step did not
	// ask for ("" = none).
	OffScript string
	Styles    *theme.Styles
	Progress  scenario.Progress
	// Selected is the dashboard's selected process (a key hint says when
	// the key's process is already selected).
	Selected string
	// Now is the board's clock, for the countdown of a step that holds.
	Now time.Time
	// Latest is the newest timeline entry (nil: none).
	Latest *board.Event
	// Watched is the step's latest event its Watch line names (nil: none
	// yet, or the step names none), pinned above Latest (in its place when
	// it is the latest).
	Watched *board.Event
	// Offset is how many lines the viewport is scrolled down.
	Offset int
}

// Title is the box title.
func (p Panel) Title() string {
	pr := p.Progress
	switch {
	case pr.Done && pr.NotRun:
		return fmt.Sprintf("Scenario %s · NOT RUN: it cannot start here · g another · esc close", pr.Name)
	case pr.Done && pr.Passed:
		return fmt.Sprintf("Scenario %s · PASSED ✓ %s · g another · esc close", pr.Name, checkCount(pr.Checks))
	case pr.Done:
		return fmt.Sprintf("Scenario %s · FAILED ✗ %s · g another · esc close", pr.Name, checkCount(pr.Checks))
	case pr.Step == 0:
		return fmt.Sprintf("Scenario %s · %s · getting ready", pr.Name, pr.Title)
	}
	return fmt.Sprintf("Scenario %s · step %d/%d: %s", pr.Name, pr.Step, pr.Steps, pr.StepTitle)
}

// ScrollHint says where the viewport is when the text does not fit:
// "lines 1-4 of 9 · [ ] scroll", or "[ ] 1-4/9" when short; "" when it
// all fits.
func (p Panel) ScrollHint(width, height int, short bool) string {
	body, vh := p.body(width), p.viewHeight(width, height)
	if len(body) <= vh || vh <= 0 {
		return ""
	}
	off := p.clamp(len(body), vh)
	if short {
		return fmt.Sprintf("[ ] %d-%d/%d", off+1, off+vh, len(body))
	}
	return fmt.Sprintf("lines %d-%d of %d · [ ] scroll", off+1, off+vh, len(body))
}

// Height is how many lines the panel needs at width to show everything
// without scrolling: the pinned lines and the whole body.
func (p Panel) Height(width int) int {
	n := len(p.top(width)) + len(p.body(width)) + len(p.bottom(width, 1<<20))
	return max(n, 4) // the latest event shows from 4 lines up
}

// MaxOffset is the largest useful Offset at this size.
func (p Panel) MaxOffset(width, height int) int {
	return max(0, len(p.body(width))-p.viewHeight(width, height))
}

func checkCount(cs []scenario.CheckResult) string {
	n := 0
	for _, c := range cs {
		if c.Passed {
			n++
		}
	}
	return fmt.Sprintf("%d/%d checks", n, len(cs))
}

// pinned lines: the action line on top while running, the latest event at
// the bottom when there is room for it and some narration.
func (p Panel) top(width int) []string {
	if p.Progress.Done {
		return nil
	}
	// Wrapped at words, never cut: the key to press is often at its end.
	return wrapIndent(p.action(), width, 2)
}

func (p Panel) bottom(width, height int) []string {
	if height < 4 {
		return nil
	}
	var out []string
	w, latest := p.Watched, p.Latest
	if w != nil && (height >= 5 || latest == nil || *w == *latest) {
		out = append(out, p.Styles.Warn.Render(common.Fit(eventLine("watch: ", w), width)))
	}
	if latest != nil && (w == nil || *w != *latest) && len(out) < height-3 {
		out = append(out, p.Styles.Muted.Render(common.Fit(eventLine("latest event: ", latest), width)))
	}
	return out
}

func eventLine(label string, e *board.Event) string {
	text := label + e.At.Format("15:04:05") + " "
	if e.Proc != "" {
		text += e.Proc + " "
	}
	return text + e.Text
}

// BodyHeight is how many lines of the scrolling body are in view.
func (p Panel) BodyHeight(width, height int) int { return max(0, p.viewHeight(width, height)) }

func (p Panel) viewHeight(width, height int) int {
	return height - len(p.top(width)) - len(p.bottom(width, height))
}

func (p Panel) clamp(total, vh int) int {
	return max(0, min(p.Offset, total-vh))
}

// View renders the body in width×height.
func (p Panel) View(width, height int) string {
	if width <= 0 || height <= 0 {
		return ""
	}
	body := p.body(width)
	vh := p.viewHeight(width, height)
	vp := viewport.New(width, max(0, vh))
	vp.SetContent(strings.Join(body, "\n"))
	vp.SetYOffset(p.clamp(len(body), vh))
	lines := p.top(width)
	if vh > 0 {
		lines = append(lines, common.FitLines(common.Lines(vp.View()), width, vh)...)
	}
	lines = append(lines, p.bottom(width, height)...)
	return strings.Join(common.FitLines(lines, width, height), "\n")
}

// action is what happens now: the presenter's key, what the runner
// waits for, or how long the step still holds the screen.
func (p Panel) action() string {
	st, pr := p.Styles, p.Progress
	switch {
	case pr.Press != nil:
		hint := pr.Press.KeyHint()
		if p.Selected == pr.Press.Process {
			hint += " (selected)"
		}
		line := st.Action.Render("▶ YOUR TURN: " + hint)
		if p.OffScript != "" {
			line += st.Warn.Render(" · " + p.OffScript)
		}
		return line
	case !pr.HoldUntil.IsZero() && !p.Now.IsZero():
		left := pr.HoldUntil.Sub(p.Now)
		secs := int((left + time.Second - 1) / time.Second) // rounded up: 0 only when over
		return st.Warn.Render("… watching: ") + fmt.Sprintf("%d s left", max(0, secs))
	case pr.Waiting != "":
		return st.Warn.Render("… waiting: ") + pr.Waiting
	}
	return st.Muted.Render("… working")
}

// body is everything that scrolls, wrapped at words to width.
func (p Panel) body(width int) []string {
	st, pr := p.Styles, p.Progress
	var out []string
	if pr.Done {
		switch {
		case pr.NotRun:
			out = append(out, wrapIndent(st.Warn.Render("not run: ")+pr.Err, width, 2)...)
			return out // its checks were never started: the reason is all there is
		case pr.Err != "":
			out = append(out, wrapIndent(st.Bad.Render("✗ stopped early: ")+pr.Err, width, 2)...)
		}
		// Each check: its claim, then what was measured, in full.
		for _, c := range pr.Checks {
			out = append(out, wrapIndent(checkHead(st, c), width, 2)...)
			for _, l := range wrap(c.Observed, width-4) {
				out = append(out, "    "+st.Muted.Render(l))
			}
		}
		if len(out) == 0 {
			out = append(out, st.Muted.Render("no checks"))
		}
		return out
	}
	out = append(out, wrap(pr.Say, width)...)
	if pr.Watch != "" {
		out = append(out, styleAll(st.Muted.Render, wrap("Watch: "+pr.Watch, width))...)
	}
	pending := 0
	for _, c := range pr.Checks {
		if c.Pending {
			pending++
			continue
		}
		out = append(out, wrapIndent(checkLine(st, c), width, 2)...)
	}
	if pending > 0 {
		out = append(out, st.Muted.Render(fmt.Sprintf("· %d check(s) still to measure", pending)))
	}
	return out
}

// wrapIndent wraps s at words, continuation lines indented by indent.
func wrapIndent(s string, width, indent int) []string {
	lines := common.Wrap(s, max(1, width))
	if len(lines) <= 1 || indent == 0 {
		return lines
	}
	rest := common.Wrap(strings.Join(lines[1:], " "), max(1, width-indent))
	out := []string{lines[0]}
	for _, l := range rest {
		out = append(out, strings.Repeat(" ", indent)+l)
	}
	return out
}

func checkHead(st *theme.Styles, c scenario.CheckResult) string {
	if c.Passed {
		return st.Good.Render("✓ ") + c.What
	}
	return st.Bad.Render("✗ ") + c.What
}

func checkLine(st *theme.Styles, c scenario.CheckResult) string {
	return checkHead(st, c) + st.Muted.Render(": "+c.Observed)
}

func wrap(s string, width int) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return common.Wrap(s, width)
}

func styleAll(f func(...string) string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = f(l)
	}
	return out
}

// Picker is the scenario chooser.
type Picker struct {
	Styles  *theme.Styles
	Entries []Entry
	Cursor  int
}

// Entry is one line of the picker.
type Entry struct {
	Name, Title, Summary string
	// Stop: the entry ends the running scenario instead of starting one.
	Stop bool
	// Article: the seed article's claim, shown for the highlighted entry.
	Article string
}

// Title is the box title.
func (Picker) Title() string {
	return "Guided scenarios · ↑/↓ choose · enter start · esc close"
}

// articleKept is how many lines of the highlighted scenario's claim (its
// title and the start of its text) the picker keeps in view when the list
// is longer than the room: the list scrolls around the cursor instead.
const articleKept = 5

// View renders the list and the highlighted scenario's claim. When both do
// not fit, the list scrolls around the cursor (a line says how many are
// above or below) so the claim keeps articleKept lines, and a claim cut
// short ends with "…".
func (p Picker) View(width, height int) string {
	st := p.Styles
	nameW := 0
	for _, e := range p.Entries {
		nameW = max(nameW, len(e.Name))
	}
	var article []string
	if p.Cursor >= 0 && p.Cursor < len(p.Entries) {
		if e := p.Entries[p.Cursor]; e.Article != "" {
			article = append([]string{"", st.Title.Render(e.Title)},
				styleAll(st.Muted.Render, wrap("The article: "+e.Article, width))...)
		}
	}
	listRoom := len(p.Entries)
	if len(p.Entries)+len(article) > height && len(article) > 0 {
		listRoom = max(3, height-min(len(article), articleKept+1))
	}
	first, last := scrollWindow(len(p.Entries), p.Cursor, listRoom)
	var lines []string
	for i := first; i < last; i++ {
		e := p.Entries[i]
		if (i == first && first > 0) || (i == last-1 && last < len(p.Entries)) {
			n := first + 1
			arrow := "↑"
			if i == last-1 && last < len(p.Entries) {
				n, arrow = len(p.Entries)-last+1, "↓"
			}
			lines = append(lines, st.Muted.Render(fmt.Sprintf("  %s %d more", arrow, n)))
			continue
		}
		cursor := "  "
		if i == p.Cursor {
			cursor = "▸ "
		}
		var line string
		if e.Stop {
			line = cursor + st.Bad.Render(e.Title)
		} else {
			line = cursor + common.Fit(e.Name, nameW) + "  " + e.Summary
		}
		if i == p.Cursor {
			line = st.Selected.Render(ansi.Strip(common.Fit(line, width)))
		}
		lines = append(lines, line)
	}
	if room := height - len(lines); len(article) > room && room > 0 {
		article = article[:room]
		article[room-1] = ansi.Truncate(article[room-1], max(width-1, 0), "") + "…"
	}
	lines = append(lines, article...)
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}

// scrollWindow is the entries [first, last) a list of n shows in room
// lines with the cursor in view: the lines at either end that stand for
// what is scrolled off are never the cursor's.
func scrollWindow(n, cursor, room int) (first, last int) {
	if n <= room {
		return 0, n
	}
	cursor = min(max(cursor, 0), n-1)
	first = max(0, cursor-room/2)
	last = min(n, first+room)
	first = max(0, last-room)
	// The cursor never sits on a line that stands for those scrolled off.
	if first > 0 && cursor == first {
		first, last = first-1, last-1
	}
	if last < n && cursor == last-1 {
		first, last = first+1, last+1
	}
	return first, last
}
