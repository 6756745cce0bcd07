package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/processes"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/usage"
)

// stateFixtures are the scenes of every process state, with their
// largest values.
var stateFixtures = []struct {
	name  string
	scene func() *scene
	msgs  []tea.Msg
}{
	{"startup", sceneStartup, nil},
	{"running", sceneRunning, []tea.Msg{keyMsg("3")}},
	{"usage_crashed", sceneUsageCrashed, []tea.Msg{keyMsg("3"), ActionResultMsg{Op: board.OpCrash, Name: board.Usage}}},
	{"current_replaying", sceneReplaying, []tea.Msg{keyMsg("2")}},
	{"usage_drift", sceneDrift, []tea.Msg{keyMsg("3")}},
	{"current_and_query_down", sceneDown, []tea.Msg{keyMsg("4")}},
	{"largest_values_states_a", sceneStatesA, []tea.Msg{keyMsg("3")}},
	{"largest_values_states_b", sceneStatesB, []tea.Msg{keyMsg("2")}},
	{"crashing", sceneRunning, []tea.Msg{keyMsg("3"), board.Request{At: at(64.5), Name: board.Usage, Op: board.OpCrash}}},
}

// headerRx matches a table's column titles in order, separated by spaces.
func headerRx(cols []common.Column) *regexp.Regexp {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = regexp.QuoteMeta(strings.TrimSpace(c.Title))
	}
	return regexp.MustCompile(`(?:^|\s|│)` + strings.Join(parts, ` +`) + `(?:\s|│|$)`)
}

// TestStableLayout reads the screen as a presenter would: at the designed
// size every column of the process and usage tables is there, at the same
// place whatever the state, and the footer keeps "? help" and "q quit";
// at 80x24 the reduced tables are fixed too.
func TestStableLayout(t *testing.T) {
	for _, sz := range []struct {
		w, h    int
		compact bool
	}{{120, 36, false}, {80, 24, true}} {
		procRx, usageRx := headerRx(processes.Columns(sz.compact)), headerRx(usage.Columns(usageWidth(sz.w, !sz.compact)))
		procAt, usageAt := -1, -1
		for _, f := range stateFixtures {
			t.Run(fmt.Sprintf("%s_%dx%d", f.name, sz.w, sz.h), func(t *testing.T) {
				out := render(t, f.scene(), sz.w, sz.h, f.msgs...)
				checkFrame(t, out, sz.w, sz.h)
				lines := strings.Split(out, "\n")
				find := func(rx *regexp.Regexp, what string, at *int) {
					for _, l := range lines {
						if loc := rx.FindStringIndex(l); loc != nil {
							col := len([]rune(l[:loc[0]]))
							if *at >= 0 && col != *at {
								t.Errorf("%s header moved: column %d, was %d", what, col, *at)
							}
							*at = col
							return
						}
					}
					t.Errorf("%s header %q not on screen:\n%s", what, rx, out)
				}
				find(procRx, "process table", &procAt)
				// The usage table has its header once there are rows.
				if strings.Contains(out, "sensor-01 ") && strings.Contains(out, "total ") {
					find(usageRx, "usage table", &usageAt)
				}
				footer := lines[len(lines)-1]
				if !strings.Contains(footer, "? help") || !strings.Contains(footer, "q quit") {
					t.Errorf("footer %q lacks ? help or q quit", footer)
				}
			})
		}
	}
}

// TestLagLowerBoundIsExplained: with partitions not committed yet the lag
// is a lower bound, and the screen says why, at both sizes.
func TestLagLowerBoundIsExplained(t *testing.T) {
	s := sceneRunning()
	s.apply(board.Committed{At: at(64.5), Group: "demo-usage", Offsets: map[int32]int64{0: 100, 1: 100}})
	for _, sz := range sizes[:2] {
		out := render(t, s, sz.w, sz.h, keyMsg("3"))
		want := "lag ≥"
		explain := "no commit yet on partition 2"
		if sz.w < fullWidth {
			explain = "no commit on p2"
		}
		if !strings.Contains(out, want) || !strings.Contains(out, explain) {
			t.Errorf("%dx%d: no explained lower bound:\n%s", sz.w, sz.h, out)
		}
		if strings.Contains(out, "+?") {
			t.Errorf("%dx%d: the unexplained +? is back", sz.w, sz.h)
		}
	}
}

// TestNewLinesKeepThePartitions: at the designed size, scaling
// consumer-usage to its largest and poison in both consumers add rows and
// counts, and the partitions the presenter was pointing at stay, one line
// each, with the events keeping their lines too.
func TestNewLinesKeepThePartitions(t *testing.T) {
	s := sceneRunning()
	s.apply(embeddedPartitions(64.5))
	steps := []struct {
		name  string
		apply func()
	}{
		{"steady", func() {}},
		{"scaled to 3", func() {
			for i, n := range []string{"consumer-usage-2", "consumer-usage-3"} {
				s.apply(board.ProcAdded{Name: n, At: at(64.6)})
				s.apply(board.ProcStarted{Name: n, PID: 4120 + i, At: at(64.6)})
			}
		}},
		{"poison", func() {
			s.status(board.Current, 64.8, status.Event{Type: status.Progress, Processed: 630, Invalid: 9})
			s.status("consumer-usage-2", 64.9, status.Event{Type: status.Progress, Processed: 20, Invalid: 3})
		}},
	}
	for _, st := range steps {
		st.apply()
		out := render(t, s.tick(65), 120, 36)
		checkFrame(t, out, 120, 36)
		for p := range 3 {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^│ p%d  leader 0  replicas \[0\]`, p)).MatchString(out) {
				t.Errorf("%s: partition %d has no line of its own:\n%s", st.name, p, out)
			}
		}
		lines := strings.Split(out, "\n")
		at := -1
		for i, l := range lines {
			if strings.Contains(l, "─ Events ") {
				at = i
			}
		}
		// The events box: its title line, then at least minEventLines
		// lines before its bottom border.
		if at < 0 || !strings.HasPrefix(lines[at+minEventLines], "│") {
			t.Errorf("%s: the events lost their lines:\n%s", st.name, out)
		}
	}
	out := render(t, s, 120, 36)
	if !strings.Contains(out, "9 invalid skipped") || !strings.Contains(out, "3 invalid messages skipped") {
		t.Errorf("the invalid counts are not in the sensors and usage panels:\n%s", out)
	}
}

// usageWidth is the usage table's width at a terminal width of w.
func usageWidth(w int, full bool) int {
	_, uw := middleSplit(w, full)
	return uw
}
