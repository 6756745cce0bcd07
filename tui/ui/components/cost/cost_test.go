package cost

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// sample is the rebuild-cost scenario's nine measurements.
func sample() board.CostView {
	var runs []board.RebuildRun
	for _, m := range []struct {
		history          int64
		replay, snap, cl int64
	}{{10_000, 190, 41, 52}, {100_000, 520, 44, 58}, {1_000_000, 3400, 52, 63}} {
		runs = append(runs,
			board.RebuildRun{Strategy: "replay", Done: true, TopicRead: m.history, Millis: m.replay, History: m.history},
			board.RebuildRun{Strategy: "snapshot", Done: true, Millis: m.snap, History: m.history},
			board.RebuildRun{Strategy: "changelog", Done: true, ChangelogRead: 11, Millis: m.cl, History: m.history})
	}
	return board.CostOf(runs)
}

func TestPanel(t *testing.T) {
	p := Panel{Styles: theme.New(nil), View: sample()}
	for _, size := range [][2]int{{118, 10}, {118, 14}, {78, 9}, {198, 14}} {
		lines := p.Lines(size[0], size[1])
		if len(lines) != size[1] {
			t.Fatalf("%v: %d lines", size, len(lines))
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w != size[0] {
				t.Fatalf("%v: line %d is %d wide: %q", size, i, w, l)
			}
		}
		t.Logf("%v:\n%s", size, strings.Join(lines, "\n"))
	}
}
