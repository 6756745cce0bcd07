package scenario

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/script"
)

// The names are a contract (--scenario NAME, workshop notes, README).
func TestCatalogNames(t *testing.T) {
	want := []string{"replay", "rebuild-cost", "checkpoint-and-skip", "non-atomic-window", "earliest-vs-latest", "stateless", "rebalance-in-flight", "grade", "leader-election", "min-insync", "key-ordering", "acks-loss", "acks-zero", "partitions-added", "offsets-expire", "retention"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("names %q, want %q", got, want)
	}
	for _, n := range want {
		if s, ok := Lookup(n); !ok || s.Name != n {
			t.Fatalf("Lookup(%q) = %q, %v", n, s.Name, ok)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup found an unknown name")
	}
	if err := ErrUnknown("nope"); !strings.Contains(err.Error(), "replay, rebuild-cost, checkpoint-and-skip") {
		t.Fatalf("ErrUnknown does not list the names: %v", err)
	}
}

// TestCatalogWellFormed checks the data the way a reviewer would: every
// text present, every script line valid, every press an action the
// narration can ask for, every check reading marks that some step takes.
func TestCatalogWellFormed(t *testing.T) {
	for _, sc := range Catalog() {
		t.Run(sc.Name, func(t *testing.T) {
			checkScenarioHead(t, sc)
			marks := map[string]bool{}
			for i, st := range sc.Steps {
				checkStep(t, sc, i, st)
				if st.Mark != "" {
					if marks[st.Mark] {
						t.Errorf("mark %q taken twice", st.Mark)
					}
					marks[st.Mark] = true
				}
			}
			for _, c := range sc.Checks {
				if c.What == "" || c.Eval == nil || len(c.Needs) == 0 {
					t.Errorf("check %q incomplete", c.What)
				}
				for _, n := range c.Needs {
					if !marks[n] {
						t.Errorf("check %q needs mark %q, which no step takes", c.What, n)
					}
				}
			}
		})
	}
}

// checkScenarioHead checks what the scenario says before its steps.
func checkScenarioHead(t *testing.T, sc Scenario) {
	t.Helper()
	if sc.Title == "" || sc.Summary == "" || sc.Article == "" || len(sc.Steps) == 0 || len(sc.Checks) == 0 {
		t.Fatalf("incomplete: %+v", sc.Info())
	}
	// The picker shows the summary beside the names on a 120-column screen.
	if n := len([]rune(sc.Summary)); n > 93 {
		t.Errorf("summary is %d characters, more than the picker shows: %q", n, sc.Summary)
	}
	if sc.UsageMode != "" && !slices.Contains(lesson.Words(lesson.Modes), sc.UsageMode) {
		t.Errorf("usage mode %q", sc.UsageMode)
	}
	if sc.UsageReset != "" && !slices.Contains(lesson.Words(lesson.Resets), sc.UsageReset) {
		t.Errorf("usage reset %q", sc.UsageReset)
	}
	if sc.Rebuild != "" && !slices.Contains(lesson.Words(lesson.Rebuilds), sc.Rebuild) {
		t.Errorf("rebuild %q", sc.Rebuild)
	}
	if _, err := script.ParseString(sc.Cleanup); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

// checkStep checks step i of sc: its words, its script lines, its press.
func checkStep(t *testing.T, sc Scenario, i int, st Step) {
	t.Helper()
	if st.Title == "" || st.Say == "" {
		t.Errorf("step %d has no title or narration", i+1)
	}
	for what, text := range map[string]string{"do": st.Do, "then": st.Then} {
		if _, err := script.ParseString(text); err != nil {
			t.Errorf("step %d %s: %v", i+1, what, err)
		}
	}
	if p := st.Press; p != nil {
		_, broker := board.ClusterBrokerNumber(p.Process)
		onTopic := action.Of(p.Action).Target == action.TargetTopic && p.Process == ""
		if action.Of(p.Action).Hint == "" || !(slices.Contains(board.Canonical, p.Process) || broker && sc.Brokers > 0 || onTopic) {
			t.Errorf("step %d: press %+v", i+1, *p)
		}
		if (p.Action == action.Mode && !slices.Contains(lesson.Words(lesson.Modes), p.Value)) || (p.Action == action.Reset && !slices.Contains(lesson.Words(lesson.Resets), p.Value)) ||
			(p.Action == action.Acks && !slices.Contains(lesson.Words(lesson.AcksSettings), p.Value)) {
			t.Errorf("step %d: press %s needs a value, has %q", i+1, p.Action, p.Value)
		}
	}
	if st.Until != nil && (st.Until.What == "" || st.Until.Holds == nil) {
		t.Errorf("step %d: an Until without words or test", i+1)
	}
}

func TestList(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(List()), "\n")
	if len(lines) != len(Catalog()) {
		t.Fatalf("%d lines for %d scenarios:\n%s", len(lines), len(Catalog()), List())
	}
	for i, sc := range Catalog() {
		if !strings.HasPrefix(lines[i], sc.Name+" ") || !strings.HasSuffix(lines[i], sc.Summary) {
			t.Errorf("line %d: %q", i+1, lines[i])
		}
	}
}

// TestEveryHintHasAPressRule: each action the narration can ask for has
// what a headless run does for it and how its effect shows, and no rule is
// left for an action the narration cannot ask for.
func TestEveryHintHasAPressRule(t *testing.T) {
	for _, a := range action.All() {
		if _, ok := presses[a.Name]; ok != (a.Hint != "") {
			t.Errorf("%s: hint %q, press rule %v", a.Name, a.Hint, ok)
		}
	}
	for n, r := range presses {
		if _, ok := action.Lookup(n); !ok || r.call == nil || r.done == nil {
			t.Errorf("press rule for %q: not an action, or incomplete", n)
		}
	}
}
