package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// TestScenarioStepsOnScreen starts every guided scenario the stack can run
// from the picker (g) of one real dashboard in tmux, and reads the first
// step the screen shows of each:
//   - at 120x36 (the full layout) the narration box shows the step's whole
//     text, as the catalog has it and wrapped as the screen wraps it: its
//     title in the box's border, what is said and what to watch, and every
//     check (its result, or counted as still to measure); no scroll hint,
//     no line cut with "…";
//   - resized to 80x24 (the compact layout) the step's title is whole, and
//     when its text or checks do not all show, the title says it scrolls.
//
// Then it stops the scenario from the picker and closes the narration. With
// KRL_CLUSTER=N the dashboard runs its own cluster and plays the scenarios
// that need one.
func TestScenarioStepsOnScreen(t *testing.T) {
	scenarios, extra := stepScenarios(t)
	d := newDashboard(t)
	if d.external != "" && len(extra) > 0 {
		t.Skip("KAFKA_BROKER is set: the cluster scenarios run with the dashboard's own brokers")
	}
	tm := startTmuxDashboard(t, d, append([]string{"--seed", "7", "--interval", "200ms"}, extra...)...)
	began := time.Now()
	awaitStackUp(t, tm)
	up := time.Now()
	t.Logf("stack up on screen in %.1f s", up.Sub(began).Seconds())
	for _, sc := range scenarios {
		start := time.Now()
		tm.pickScenario(sc.Name)
		k, box := tm.awaitStepBox(sc.Name)
		shown := time.Since(start)
		if problems := box.wholeStep(sc, k); len(problems) > 0 {
			t.Errorf("%s step %d at %dx%d:\n  %s\nthe narration box:\n%s", sc.Name, k, termWidth, termHeight,
				strings.Join(problems, "\n  "), box.text())
		}

		tm.resize(80, 24)
		ck, compact := tm.awaitCompactStep(sc.Name)
		if problems := compact.titled(sc, ck); len(problems) > 0 {
			t.Errorf("%s step %d at 80x24:\n  %s\nthe narration:\n%s", sc.Name, ck, strings.Join(problems, "\n  "),
				strings.Join(compact.lines, "\n"))
		}
		tm.resize(termWidth, termHeight)
		tm.awaitStepBox(sc.Name)

		tm.stopScenario(sc.Name)
		t.Logf("%s: step %d/%d read at %dx%d (%d lines in the box) %.1f s after enter; at 80x24 step %d, scroll hint %q; closed after %.1f s",
			sc.Name, k, len(sc.Steps), termWidth, termHeight, len(box.inner), shown.Seconds(), ck, compact.hint(), time.Since(start).Seconds())
	}
	t.Logf("%d scenarios read in %.1f s (%.1f s with the stack's start)",
		len(scenarios), time.Since(up).Seconds(), time.Since(began).Seconds())
}

// stepScenarios are the scenarios this run can play and the dashboard's
// extra flags: those that run on any stack, or with KRL_CLUSTER=N the
// cluster's (as TestScenariosHeadless splits them).
func stepScenarios(t *testing.T) ([]scenario.Scenario, []string) {
	t.Helper()
	n := 0
	if v := os.Getenv("KRL_CLUSTER"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("KRL_CLUSTER=%q: want a number of brokers", v)
		}
	}
	var out []scenario.Scenario
	var extra []string
	external := os.Getenv("KAFKA_BROKER") != ""
	for _, sc := range scenario.Catalog() {
		if sc.OffsetsRetention > 0 && (n > 0 || external) {
			// Its retention is the embedded broker's here (the lab sets
			// none on an external broker).
			continue
		}
		if sc.OwnBroker && external {
			// It kills its broker: it refuses one given with --brokers.
			continue
		}
		if (n == 0 && sc.Brokers == 0) || (n > 0 && sc.Brokers > 0 && sc.Brokers <= n) {
			out = append(out, sc)
			if sc.OffsetsRetention > 0 && len(extra) == 0 {
				extra = []string{"--offsets-retention", "5s"}
			}
		}
	}
	if n > 0 {
		return out, []string{"--cluster", strconv.Itoa(n)}
	}
	return out, extra
}

// resize makes the window w×h and waits until the pane is.
func (tm *tmuxTerm) resize(w, h int) {
	tm.t.Helper()
	tm.tmux("resize-window", "-t", "krl", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
	want := fmt.Sprintf("%dx%d", w, h)
	AwaitCondition(tm.t, "the pane at "+want, 5*time.Second, 20*time.Millisecond, func() error {
		if got := tm.display("#{pane_width}x#{pane_height}"); got != want {
			return fmt.Errorf("pane is %s", got)
		}
		return nil
	})
}

// pickScenario opens the picker, moves its cursor to name and starts it.
func (tm *tmuxTerm) pickScenario(name string) {
	tm.t.Helper()
	tm.key("g")
	cursor := tm.await("the scenario picker open", 5*time.Second, func(s string) error {
		if !strings.Contains(s, "Guided scenarios · ↑/↓ choose") {
			return fmt.Errorf("no picker")
		}
		if pickerCursor(s) == "" {
			return fmt.Errorf("no cursor line")
		}
		return nil
	})
	for moves := 0; !strings.HasPrefix(pickerCursor(cursor), name+" "); moves++ {
		if moves > len(scenario.Catalog())+1 {
			tm.t.Fatalf("the picker's cursor never reached %s:\n%s", name, cursor)
		}
		was := pickerCursor(cursor)
		tm.key("Down")
		screen := tm.await("the picker's cursor moved", 5*time.Second, func(s string) error {
			if pickerCursor(s) == was {
				return fmt.Errorf("cursor still on %q", was)
			}
			return nil
		})
		cursor = screen
	}
	tm.key("Enter")
}

var pickerCursorRe = regexp.MustCompile(`│▸ (.*?)\s*│`)

// pickerCursor is the text of the picker's highlighted entry ("" = none).
func pickerCursor(screen string) string {
	_, picker, ok := strings.Cut(screen, "Guided scenarios · ↑/↓ choose")
	if !ok {
		return ""
	}
	if m := pickerCursorRe.FindStringSubmatch(picker); m != nil {
		return m[1]
	}
	return ""
}

// stepBox is the narration box of the full layout as read off the screen:
// its top border (the title) and its inner lines, borders cut off.
type stepBox struct {
	border string
	inner  []string
}

func (b stepBox) text() string { return b.border + "\n" + strings.Join(b.inner, "\n") }

var stepTitleRe = regexp.MustCompile(`Scenario (\S+) · step (\d+)/(\d+): (.*)`)

// readStepBox finds the narration box of scenario name showing a step
// (not "getting ready", not the result) on screen.
func readStepBox(screen, name string) (stepBox, int, bool) {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "─ Scenario "+name+" · step ") {
			continue
		}
		top := []rune(l)
		// The box's top corners, or the joints of a border it shares.
		left, right := indexAny(top, "╭├"), lastIndexAny(top, "╮┤")
		if left < 0 || right <= left {
			return stepBox{}, 0, false
		}
		box := stepBox{border: string(top[left : right+1])}
		for _, l := range lines[i+1:] {
			r := []rune(l)
			if len(r) <= left || r[left] == '╰' {
				break
			}
			end := lastIndexRune(r, '│')
			if r[left] != '│' || end <= left {
				return stepBox{}, 0, false
			}
			box.inner = append(box.inner, string(r[left+1:end]))
		}
		m := stepTitleRe.FindStringSubmatch(box.border)
		if m == nil || m[1] != name {
			return stepBox{}, 0, false
		}
		k, _ := strconv.Atoi(m[2])
		return box, k, k >= 1
	}
	return stepBox{}, 0, false
}

// awaitStepBox waits until the narration box shows a step of name, the
// same in two captures in a row (a frame read while tmux draws it is not
// judged), and returns the step's number and the box.
func (tm *tmuxTerm) awaitStepBox(name string) (int, stepBox) {
	tm.t.Helper()
	var (
		box, prev stepBox
		k         int
	)
	tm.await(name+"'s narration showing a step", 2*time.Minute, func(s string) error {
		b, n, ok := readStepBox(s, name)
		if !ok {
			prev = stepBox{}
			return fmt.Errorf("no step of %s in a narration box", name)
		}
		if b.text() != prev.text() {
			prev = b
			return fmt.Errorf("step %d drawn once, awaiting the same frame again", n)
		}
		box, k = b, n
		return nil
	})
	return k, box
}

var scrollHintRe = regexp.MustCompile(`lines \d+-\d+ of \d+|\[ \] \d+-\d+/\d+`)

// wholeStep lists what the box lacks of step k of sc: its title whole in
// the border, the number of steps, no scroll hint, the whole Say and Watch
// text, every check (a result line each, or counted as still to measure),
// and no line cut short with "…".
func (b stepBox) wholeStep(sc scenario.Scenario, k int) []string {
	var problems []string
	m := stepTitleRe.FindStringSubmatch(b.border)
	if n, _ := strconv.Atoi(m[3]); n != len(sc.Steps) || k > len(sc.Steps) {
		return []string{fmt.Sprintf("step %d/%d on screen, the catalog has %d steps", k, n, len(sc.Steps))}
	}
	st := sc.Steps[k-1]
	title := strings.TrimRight(m[4], "─╮┤ ")
	if hint := scrollHintRe.FindString(title); hint != "" {
		problems = append(problems, fmt.Sprintf("the box scrolls: %q", hint))
	}
	if title != st.Title && !strings.HasPrefix(title, st.Title+" · ") {
		problems = append(problems, fmt.Sprintf("title %q, want %q", title, st.Title))
	}
	text := normalized(strings.Join(b.inner, " "))
	if say := normalized(st.Say); !strings.Contains(text, say) {
		problems = append(problems, fmt.Sprintf("what is said is not whole on screen: %q", st.Say))
	}
	if st.Watch != "" {
		if watch := normalized("Watch: " + st.Watch); !strings.Contains(text, watch) {
			problems = append(problems, fmt.Sprintf("what to watch is not whole on screen: %q", st.Watch))
		}
	}
	if n := checksShown(b.inner); n != len(sc.Checks) {
		problems = append(problems, fmt.Sprintf("%d of the scenario's %d checks shown or counted", n, len(sc.Checks)))
	}
	for _, l := range b.inner {
		l = strings.TrimSpace(l)
		// The latest event is the timeline's line, cut to fit by design.
		if strings.HasSuffix(l, "…") && !strings.HasPrefix(l, "latest event:") {
			problems = append(problems, fmt.Sprintf("a line is cut: %q", l))
		}
	}
	return problems
}

// compactStep is the narration of the compact layout: its title line and
// the lines below it down to the latest event (or the status line).
type compactStep struct {
	title string
	lines []string
}

// readCompactStep finds the compact narration of name showing a step.
func readCompactStep(screen, name string) (compactStep, int, bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "Scenario "+name+" · step ") {
			continue
		}
		m := stepTitleRe.FindStringSubmatch(l)
		if m == nil {
			return compactStep{}, 0, false
		}
		c := compactStep{title: l, lines: []string{l}}
		// The last two lines are the status line and the footer.
		for _, b := range lines[i+1 : max(i+1, len(lines)-2)] {
			c.lines = append(c.lines, b)
			if strings.HasPrefix(b, "latest event:") {
				break
			}
		}
		k, _ := strconv.Atoi(m[2])
		return c, k, k >= 1
	}
	return compactStep{}, 0, false
}

// awaitCompactStep is awaitStepBox for the compact layout.
func (tm *tmuxTerm) awaitCompactStep(name string) (int, compactStep) {
	tm.t.Helper()
	var (
		got  compactStep
		prev string
		k    int
	)
	tm.await(name+"'s compact narration showing a step", 30*time.Second, func(s string) error {
		c, n, ok := readCompactStep(s, name)
		if !ok {
			prev = ""
			return fmt.Errorf("no step of %s in a compact narration", name)
		}
		if joined := strings.Join(c.lines, "\n"); joined != prev {
			prev = joined
			return fmt.Errorf("step %d drawn once, awaiting the same frame again", n)
		}
		got, k = c, n
		return nil
	})
	return k, got
}

func (c compactStep) hint() string { return scrollHintRe.FindString(c.title) }

// titled lists what the compact narration lacks of step k: its title
// whole, and a scroll hint when the step's text or its checks do not all
// show.
func (c compactStep) titled(sc scenario.Scenario, k int) []string {
	if k > len(sc.Steps) {
		return []string{fmt.Sprintf("step %d on screen, the catalog has %d steps", k, len(sc.Steps))}
	}
	st := sc.Steps[k-1]
	var problems []string
	want := fmt.Sprintf("step %d/%d: %s", k, len(sc.Steps), st.Title)
	shown := strings.TrimRight(c.title[strings.Index(c.title, "step "):], " ")
	if rest, ok := strings.CutPrefix(shown, want); !ok || (rest != "" && !strings.HasPrefix(rest, " · ")) {
		problems = append(problems, fmt.Sprintf("title line %q, want it to hold %q whole", c.title, want))
	}
	text := normalized(strings.Join(c.lines[1:], " "))
	whole := strings.Contains(text, normalized(st.Say)) && (st.Watch == "" || strings.Contains(text, normalized("Watch: "+st.Watch))) &&
		checksShown(c.lines[1:]) == len(sc.Checks)
	if !whole && c.hint() == "" {
		problems = append(problems, "the step's text or its checks do not all show and the title has no scroll hint")
	}
	return problems
}

var pendingChecksRe = regexp.MustCompile(`^· (\d+) check\(s\) still to measure`)

// checksShown counts the checks the narration's lines account for: one
// per result line (✓ or ✗), and the number still to measure.
func checksShown(lines []string) int {
	n := 0
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if m := pendingChecksRe.FindStringSubmatch(l); m != nil {
			pending, _ := strconv.Atoi(m[1])
			n += pending
		} else if strings.HasPrefix(l, "✓ ") || strings.HasPrefix(l, "✗ ") {
			n++
		}
	}
	return n
}

// stopScenario stops name from the picker's first entry (if it still
// runs) and closes its narration with esc.
func (tm *tmuxTerm) stopScenario(name string) {
	tm.t.Helper()
	tm.key("g")
	s := tm.await("the scenario picker open", 5*time.Second, func(s string) error {
		if pickerCursor(s) == "" {
			return fmt.Errorf("no picker cursor")
		}
		return nil
	})
	if pickerCursor(s) == "■ stop the running scenario ("+name+")" {
		tm.key("Enter")
	} else {
		tm.key("Escape")
	}
	done := regexp.MustCompile(`[╭├]─ Scenario ` + regexp.QuoteMeta(name) + ` · (PASSED|FAILED)`)
	tm.await(name+" ended", time.Minute, func(s string) error {
		if !done.MatchString(s) {
			return fmt.Errorf("no result in the narration")
		}
		return nil
	})
	tm.key("Escape")
	tm.await(name+"'s narration closed", 5*time.Second, func(s string) error {
		if strings.Contains(s, "─ Scenario ") || !strings.Contains(s, "─ Events") {
			return fmt.Errorf("narration still open")
		}
		return nil
	})
}

// normalized is s with one space between words.
func normalized(s string) string { return strings.Join(strings.Fields(s), " ") }

func lastIndexRune(r []rune, c rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == c {
			return i
		}
	}
	return -1
}

func indexAny(r []rune, chars string) int {
	for i, c := range r {
		if strings.ContainsRune(chars, c) {
			return i
		}
	}
	return -1
}

func lastIndexAny(r []rune, chars string) int {
	for i := len(r) - 1; i >= 0; i-- {
		if strings.ContainsRune(chars, r[i]) {
			return i
		}
	}
	return -1
}
