// Package narration renders guided scenarios: the narration panel (the
// current step, what is said, what to watch, the presenter's key, and the
// checks as their results come in) and the scenario picker.
package narration

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// Panel is the narration panel of a running (or finished) scenario.
type Panel struct {
	Styles   *theme.Styles
	Progress scenario.Progress
	// Selected is the dashboard's selected process (a key hint says when
	// the key's process is already selected).
	Selected string
}

// Title is the box title.
func (p Panel) Title() string {
	pr := p.Progress
	switch {
	case pr.Done && pr.Passed:
		return fmt.Sprintf("Scenario %s · PASSED ✓ %s · g another · esc close", pr.Name, checkCount(pr.Checks))
	case pr.Done:
		return fmt.Sprintf("Scenario %s · FAILED ✗ %s · g another · esc close", pr.Name, checkCount(pr.Checks))
	case pr.Step == 0:
		return fmt.Sprintf("Scenario %s · %s · getting ready", pr.Name, pr.Title)
	}
	return fmt.Sprintf("Scenario %s · step %d/%d: %s", pr.Name, pr.Step, pr.Steps, pr.StepTitle)
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

// View renders the body in width×height.
func (p Panel) View(width, height int) string {
	if width <= 0 || height <= 0 {
		return ""
	}
	var lines []string
	if p.Progress.Done {
		lines = p.done(width, height)
	} else {
		lines = p.running(width, height)
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}

// running: narration, the presenter's key or what is awaited, what to
// watch, then the checks measured so far.
func (p Panel) running(width, height int) []string {
	st, pr := p.Styles, p.Progress
	say := wrap(pr.Say, width)
	watch := wrap("Watch: "+pr.Watch, width)
	if pr.Watch == "" {
		watch = nil
	}
	action := st.Muted.Render("… " + orText(pr.Waiting, "working"))
	if pr.Press != nil {
		hint := pr.Press.KeyHint()
		if p.Selected == pr.Press.Process {
			hint += " (selected)"
		}
		action = st.Action.Render("▶ YOUR TURN: " + hint)
	} else if pr.Waiting != "" {
		action = st.Warn.Render("… waiting: ") + pr.Waiting
	}
	var checks []string
	pending := 0
	for _, c := range pr.Checks {
		if c.Pending {
			pending++
			continue
		}
		checks = append(checks, checkLine(st, c))
	}
	if pending > 0 {
		checks = append(checks, st.Muted.Render(fmt.Sprintf("· %d check(s) still to measure", pending)))
	}

	// What fits, by priority: the action line, one line of narration, one
	// of what to watch, the checks, then the rest of the narration.
	nSay, nWatch, nChecks := min(len(say), 2), min(len(watch), 1), len(checks)
	for 1+nSay+nWatch+nChecks > height {
		switch {
		case nChecks > 1:
			nChecks = 1
			checks = []string{summary(st, pr.Checks)}
		case nSay > 1:
			nSay--
		case nWatch > 0:
			nWatch--
		case nChecks > 0:
			nChecks--
		default:
			nSay--
		}
	}
	for 1+nSay+nWatch+nChecks < height && nWatch < min(len(watch), 2) {
		nWatch++
	}
	out := append([]string(nil), say[:nSay]...)
	out = append(out, action)
	out = append(out, styleAll(st.Muted.Render, watch[:nWatch])...)
	return append(out, checks[:nChecks]...)
}

// done: every check with what was observed.
func (p Panel) done(width, height int) []string {
	st, pr := p.Styles, p.Progress
	var out []string
	if pr.Err != "" {
		out = append(out, st.Bad.Render("✗ stopped early: ")+pr.Err)
	}
	// Each check takes two lines (claim, then what was measured) while
	// there is room, one line otherwise.
	spare := height - len(out) - len(pr.Checks)
	for _, c := range pr.Checks {
		if spare > 0 {
			spare--
			out = append(out, checkHead(st, c), st.Muted.Render("    "+c.Observed))
		} else {
			out = append(out, checkLine(st, c))
		}
	}
	if len(out) == 0 {
		out = append(out, st.Muted.Render("no checks"))
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

func summary(st *theme.Styles, cs []scenario.CheckResult) string {
	var ok, bad, pending int
	for _, c := range cs {
		switch {
		case c.Pending:
			pending++
		case c.Passed:
			ok++
		default:
			bad++
		}
	}
	return st.Muted.Render(fmt.Sprintf("checks: %d ✓ · %d ✗ · %d to measure", ok, bad, pending))
}

func wrap(s string, width int) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return common.Lines(ansi.Wrap(s, width, ""))
}

func styleAll(f func(...string) string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = f(l)
	}
	return out
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
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

// View renders the list and the highlighted scenario's claim.
func (p Picker) View(width, height int) string {
	st := p.Styles
	nameW := 0
	for _, e := range p.Entries {
		nameW = max(nameW, len(e.Name))
	}
	var lines []string
	for i, e := range p.Entries {
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
	if p.Cursor >= 0 && p.Cursor < len(p.Entries) {
		e := p.Entries[p.Cursor]
		if e.Article != "" {
			lines = append(lines, "")
			lines = append(lines, st.Title.Render(e.Title))
			lines = append(lines, styleAll(st.Muted.Render, wrap("The article: "+e.Article, width))...)
		}
	}
	return strings.Join(common.FitLines(lines, width, min(height, len(lines))), "\n")
}
