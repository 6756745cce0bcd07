package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// screenText is the view without box lines, one space between words.
func screenText(v string) string {
	v = strings.NewReplacer("│", " ", "╭", " ", "╮", " ", "╰", " ", "╯", " ", "─", " ", "├", " ", "┤", " ", "┬", " ", "┴", " ").Replace(v)
	return strings.Join(strings.Fields(v), " ")
}

// readAll scrolls the narration from top to bottom and returns every
// screen on the way, joined.
func readAll(t *testing.T, m tea.Model) string {
	t.Helper()
	var all []string
	for i := 0; i < 20; i++ {
		all = append(all, m.View())
		m = press(t, m, "]")
	}
	return strings.Join(all, "\n")
}

// TestNarrationReadsInFull: scrolled through, the narration shows every
// word of what is said, what to watch and every check's observation, at
// 120x36 and 80x24; no word is cut.
func TestNarrationReadsInFull(t *testing.T) {
	for _, sz := range sizes[:2] {
		for _, p := range []scenario.Progress{progressPress(), progressWaiting(), progressDone(true), progressDone(false)} {
			m := scenarioModel(sceneRunning(), &fakeScenarios{}, sz.w, sz.h)
			m, _ = m.Update(Inputs{Narration{Step: p}})
			seen := readAll(t, m)
			words := map[string]bool{}
			for _, l := range strings.Split(seen, "\n") {
				for _, w := range strings.Fields(screenText(l)) {
					words[w] = true
				}
			}
			var texts []string
			if !p.Done {
				texts = append(texts, p.Say, p.Watch)
			}
			for _, c := range p.Checks {
				if !c.Pending {
					texts = append(texts, c.What, c.Observed)
				}
			}
			if p.Err != "" {
				texts = append(texts, p.Err)
			}
			for _, text := range texts {
				for _, w := range strings.Fields(text) {
					if !words[w] {
						t.Errorf("%dx%d step %d done=%v: %q never on screen", sz.w, sz.h, p.Step, p.Done, w)
					}
				}
			}
		}
	}
}

func TestNarrationScrollsWithBrackets(t *testing.T) {
	m := scenarioModel(sceneRunning(), &fakeScenarios{}, 80, 24)
	m, _ = m.Update(Inputs{Narration{Step: progressDone(false)}})
	first := m.View()
	if !regexp.MustCompile(`\[ \] 1-\d+/\d+`).MatchString(first) {
		t.Fatalf("no scroll hint:\n%s", first)
	}
	m = press(t, m, "]")
	if v := m.View(); v == first || !strings.Contains(v, "[ ] 4-") {
		t.Fatalf("] did not scroll:\n%s", v)
	}
	m = press(t, m, "[")
	if v := m.View(); v != first {
		t.Fatalf("[ did not scroll back:\n%s", v)
	}
	// The key is in the help.
	m = press(t, m, "?")
	if v := m.View(); !strings.Contains(v, "[ ] scroll") {
		t.Fatalf("full help lacks the scroll key:\n%s", v)
	}
}

func TestNarrationCountsDown(t *testing.T) {
	sc := replayCatalog()
	p := scenario.Progress{Name: sc.Name, Title: sc.Title, Step: 2, Steps: len(sc.Steps), StepTitle: sc.Steps[1].Title,
		Say: sc.Steps[1].Say, Waiting: "watching for 6s", HoldUntil: at(64.4 + 6)}
	m := scenarioModel(sceneRunning(), &fakeScenarios{}, 120, 36)
	m, _ = m.Update(Inputs{Narration{Step: p}})
	if v := m.View(); !strings.Contains(v, "watching: 6 s left") {
		t.Fatalf("no countdown:\n%s", v)
	}
	m, _ = m.Update(Inputs{board.Tick{Now: at(66.5)}})
	if v := m.View(); !strings.Contains(v, "watching: 4 s left") {
		t.Fatalf("countdown did not move:\n%s", v)
	}
}

func TestLogViewScrollsBack(t *testing.T) {
	var lines []string
	for i := 0; i < 60; i++ {
		lines = append(lines, "level=INFO msg=line"+strings.Repeat("x", i%3)+" n="+string(rune('A'+i%26)))
	}
	ctl := &fakeController{tail: lines}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "3")
	m = press(t, m, "l")
	v := m.View()
	if !strings.Contains(v, "of 60 · [ ] scroll") || !strings.Contains(v, lines[59]) {
		t.Fatalf("log view:\n%s", v)
	}
	m = press(t, m, "[")
	if v := m.View(); strings.Contains(v, "-60 of 60") {
		t.Fatalf("[ did not scroll back:\n%s", v)
	}
}

// TestEveryScenarioStepFits: at 120x36 every step of every scenario, with
// its checks measured, shows its whole text without a scroll hint.
func TestEveryScenarioStepFits(t *testing.T) {
	for _, sc := range scenario.Catalog() {
		for i, st := range sc.Steps {
			p := stepProgress(sc, i)
			m := scenarioModel(sceneRunning(), &fakeScenarios{}, 120, 36)
			m, _ = m.Update(Inputs{Narration{Step: p}})
			v := m.View()
			if strings.Contains(v, "[ ] scroll") || strings.Contains(v, "[ ] ") {
				t.Errorf("%s step %d needs scrolling at 120x36:\n%s", sc.Name, i+1, v)
				continue
			}
			text := screenText(v)
			for _, part := range []string{st.Say, st.Watch} {
				if !strings.Contains(text, strings.Join(strings.Fields(part), " ")) {
					t.Errorf("%s step %d: %q not whole on screen", sc.Name, i+1, part)
				}
			}
		}
	}
}

// stepProgress is step i of sc as the runner reports it while it waits,
// with every check measured.
func stepProgress(sc scenario.Scenario, i int) scenario.Progress {
	st := sc.Steps[i]
	p := scenario.Progress{Name: sc.Name, Title: sc.Title, Step: i + 1, Steps: len(sc.Steps), StepTitle: st.Title,
		Say: st.Say, Watch: st.Watch, Press: st.Press, Checks: measured(sc)}
	if st.Press != nil {
		p.Waiting = "your turn: " + st.Press.KeyHint()
	} else if st.Until != nil {
		p.Waiting = st.Until.What
	}
	return p
}

// measured is every check of sc passed with an observation of typical length.
func measured(sc scenario.Scenario) []scenario.CheckResult {
	var out []scenario.CheckResult
	for _, c := range sc.Checks {
		out = append(out, scenario.CheckResult{What: c.What, Passed: true, Observed: "10/10 sensors identical, rebuilt in 1.4 s"})
	}
	return out
}

// TestEveryScenarioStepSaysWhenItScrolls: at 80x24 a step need not fit,
// but what does not fit is never cut silently: the step's text is whole on
// screen or the title ends with the scroll hint.
func TestEveryScenarioStepSaysWhenItScrolls(t *testing.T) {
	hint := regexp.MustCompile(`\[ \] \d+-\d+/\d+|lines \d+-\d+ of \d+`)
	for _, sc := range scenario.Catalog() {
		for i, st := range sc.Steps {
			p := stepProgress(sc, i)
			m := scenarioModel(sceneRunning(), &fakeScenarios{}, 80, 24)
			m, _ = m.Update(Inputs{Narration{Step: p}})
			v := m.View()
			text := screenText(v)
			whole := true
			parts := []string{st.Say, st.Watch}
			for _, c := range sc.Checks {
				parts = append(parts, c.What)
			}
			for _, part := range parts {
				whole = whole && strings.Contains(text, strings.Join(strings.Fields(part), " "))
			}
			if !whole && !hint.MatchString(v) {
				t.Errorf("%s step %d: cut at 80x24 with no scroll hint:\n%s", sc.Name, i+1, v)
			}
			// The title gives way to the hint, never the step's own title.
			if title := fmt.Sprintf("step %d/%d: %s", i+1, len(sc.Steps), st.Title); !strings.Contains(text, title) {
				t.Errorf("%s step %d: %q not whole at 80x24:\n%s", sc.Name, i+1, title, v)
			}
		}
	}
}

// TestNarrationPinsTheStepsEvent: while the narration covers the events
// panel, the latest event of the step that its Watch line names stays in
// view above the latest event; an older one is not the step's.
func TestNarrationPinsTheStepsEvent(t *testing.T) {
	p := progressWaiting()
	p.Event, p.StepAt = "caught up after", at(1.0)
	m := scenarioModel(sceneRunning(), &fakeScenarios{}, 120, 36)
	m, _ = m.Update(Inputs{Narration{Step: p}})
	v := screenText(m.View())
	if !strings.Contains(v, "watch: 10:00:01 consumer-current caught up after 0 messages in 0.3 s latest event:") {
		t.Fatalf("the step's event is not pinned above the latest:\n%s", m.View())
	}
	// The step before's event stays until the step's own comes.
	p.Event, p.StepAt, p.PrevEvent, p.PrevAt = "late write", at(2), p.Event, p.StepAt
	m, _ = m.Update(Inputs{Narration{Step: p}})
	if v := screenText(m.View()); !strings.Contains(v, "watch: 10:00:01 consumer-current caught up after 0 messages") {
		t.Fatalf("the step before's event is not pinned:\n%s", m.View())
	}
	p.PrevEvent = ""
	m, _ = m.Update(Inputs{Narration{Step: p}})
	if v := m.View(); strings.Contains(v, "watch: ") {
		t.Fatalf("an event from before the step is pinned:\n%s", v)
	}
}

// TestEveryScenarioStepReadsAt80x24: at 80x24 every step of every scenario
// (its key's process selected, every check measured) and every finished
// scenario can be read whole in the narration's area: scrolled with ], each
// word of the action line, what is said, what to watch and every check's
// claim and observation is on screen, never cut ("(sele…"); a step that
// does not fit says that it scrolls.
func TestEveryScenarioStepReadsAt80x24(t *testing.T) {
	hint := regexp.MustCompile(`\[ \] \d+-\d+/\d+|lines \d+-\d+ of \d+`)
	for _, sc := range scenario.Catalog() {
		var steps []scenario.Progress
		for i := range sc.Steps {
			steps = append(steps, stepProgress(sc, i))
		}
		done := scenario.Progress{Name: sc.Name, Title: sc.Title, Steps: len(sc.Steps), Done: true, Passed: true, Checks: measured(sc)}
		for i, p := range append(steps, done) {
			mm := scenarioModel(sceneRunning(), &fakeScenarios{}, 80, 24).(Model)
			var texts []string
			if p.Press != nil {
				texts = append(texts, p.Press.KeyHint())
				if mm.board.Has(p.Press.Process) { // the scene has one broker: broker-2 is not there to select
					mm.selected = p.Press.Process
					texts = append(texts, "(selected)")
				}
			}
			m, _ := mm.Update(Inputs{Narration{Step: p}})
			first := m.View()
			if !p.Done {
				texts = append(texts, p.Say, p.Watch)
			}
			for _, c := range p.Checks {
				texts = append(texts, c.What, c.Observed)
			}
			words := map[string]bool{}
			for _, v := range strings.Split(readAll(t, m), "\n") {
				for _, w := range strings.Fields(v) {
					words[w] = true
					words[strings.TrimSuffix(w, ":")] = true // a running step's check reads "claim: observation"
				}
			}
			var missing []string
			for _, text := range texts {
				for _, w := range strings.Fields(text) {
					if !words[w] {
						missing = append(missing, w)
					}
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s step %d (done %v): never whole on screen at 80x24: %q\n%s", sc.Name, i+1, p.Done, missing, first)
			}
			whole := true
			for _, text := range texts {
				whole = whole && strings.Contains(screenText(first), strings.Join(strings.Fields(text), " "))
			}
			if !whole && !hint.MatchString(first) {
				t.Errorf("%s step %d (done %v): does not fit at 80x24 and does not say it scrolls:\n%s", sc.Name, i+1, p.Done, first)
			}
		}
	}
}
