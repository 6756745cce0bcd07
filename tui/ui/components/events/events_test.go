package events

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestLongEntriesWrapAndStayWhole(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	evs := []board.Event{
		{At: t0, Proc: "producer", Level: board.LevelInfo, Text: "connected"},
		{At: t0.Add(time.Second), Proc: "consumer-query", Level: board.LevelWarn,
			Text: "retrying mongo 127.0.0.1:37017: server selection error: context deadline exceeded"},
	}
	p := Panel{Styles: theme.New(nil), Events: evs}
	got := strings.Split(p.View(60, 4), "\n")
	want := []string{
		"10:00:00 · producer        connected",
		"10:00:01 ! consumer-query  retrying mongo 127.0.0.1:37017:",
		"                           server selection error: context",
		"                           deadline exceeded",
	}
	for i := range want {
		if i >= len(got) || strings.TrimRight(got[i], " ") != want[i] {
			t.Fatalf("4 lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// Two lines of room: the older entry goes, the newest stays whole.
	got = strings.Split(p.View(60, 2), "\n")
	if !strings.HasPrefix(got[0], "10:00:01 ! consumer-query") {
		t.Fatalf("2 lines: %q", got)
	}
	// One line: the newest entry's first line, cut, never a continuation.
	got = strings.Split(p.View(60, 1), "\n")
	if len(got) != 1 || !strings.HasPrefix(got[0], "10:00:01 ! consumer-query  retrying") || !strings.HasSuffix(strings.TrimRight(got[0], " "), "…") {
		t.Fatalf("1 line: %q", got)
	}
	// An older entry that does not fit whole shows its first lines, cut:
	// no empty row above the newest.
	p.Events = append(evs, board.Event{At: t0.Add(2 * time.Second), Proc: "producer", Level: board.LevelInfo, Text: "paused"})
	got = strings.Split(p.View(60, 3), "\n")
	if len(got) != 3 || !strings.HasPrefix(got[0], "10:00:01 ! consumer-query  retrying") ||
		!strings.HasSuffix(strings.TrimRight(got[1], " "), "…") || !strings.HasPrefix(got[2], "10:00:02 · producer") {
		t.Fatalf("3 lines, the older entry cut: %q", got)
	}
}
