package common

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{Fixed2(3), "3.00"},
		{Fixed2(0.125), "0.13"},
		{Fixed2(1234.5), "1234.50"},
		{Signed2(125), "+1.25"},
		{Signed2(-50), "-0.50"},
		{Signed2(0), "0.00"},
		{Count(0), "0"},
		{Count(999), "999"},
		{Count(1000), "1,000"},
		{Count(-1234567), "-1,234,567"},
		{Ago(0), "0s ago"},
		{Ago(3*time.Second + 900*time.Millisecond), "3s ago"},
		{Ago(4 * time.Minute), "4m ago"},
		{Ago(3 * time.Hour), "3h ago"},
		{Uptime(42 * time.Second), "42s"},
		{Uptime(3*time.Minute + 7*time.Second), "3m07s"},
		{Uptime(62 * time.Minute), "1h02m"},
		{Coord(45.46421), "45.4642"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		samples []int64
		width   int
		floor   int64
		want    string
	}{
		{[]int64{0, 0, 0}, 3, 0, "▁▁▁"},
		{[]int64{0, 7, 14}, 3, 0, "▁▄█"},
		{[]int64{2, 2}, 2, 20, "▂▂"}, // a small steady lag stays low
		{[]int64{-1, 5, -1}, 3, 0, "·█·"},
		{[]int64{1, 2, 3, 4}, 2, 0, "▆█"}, // the latest samples win
		{nil, 4, 0, ""},
	}
	for _, tc := range tests {
		if got := Sparkline(tc.samples, tc.width, tc.floor); got != tc.want {
			t.Errorf("Sparkline(%v, %d, %d) = %q, want %q", tc.samples, tc.width, tc.floor, got, tc.want)
		}
	}
}

func TestTableDropsAndAligns(t *testing.T) {
	cols := []Column{
		{Title: "name"},
		{Title: "extra", Drop: 2},
		{Title: "value", Align: Right},
		{Title: "note", Drop: 1},
	}
	rows := [][]Cell{
		{Plain("a"), Plain("xxxxxxxx"), Plain("1.00"), Plain("nnnn")},
		{Plain("bbbb"), Plain("y"), Plain("123.45"), Plain("n")},
	}
	head, lines := Table(cols, rows, 40, lipgloss.NewStyle(), nil)
	if want := "name  extra      value  note"; strings.TrimRight(head, " ") != want {
		// Titles align like their column: "value" is right-aligned.
		t.Fatalf("wide head %q", head)
	}
	head, lines = Table(cols, rows, 20, lipgloss.NewStyle(), nil)
	// Too narrow for everything: the highest Drop goes first.
	if strings.TrimRight(head, " ") != "name   value  note" {
		t.Fatalf("narrow head %q", head)
	}
	if strings.TrimRight(lines[0], " ") != "a       1.00  nnnn" || strings.TrimRight(lines[1], " ") != "bbbb  123.45  n" {
		t.Fatalf("rows %q", lines)
	}
	for _, l := range append([]string{head}, lines...) {
		if lipgloss.Width(l) != 20 {
			t.Fatalf("line %q is %d wide", l, lipgloss.Width(l))
		}
	}
	head, _ = Table(cols, rows, 12, lipgloss.NewStyle(), nil)
	if strings.TrimRight(head, " ") != "name   value" {
		t.Fatalf("narrowest head %q", head)
	}
}

func TestBox(t *testing.T) {
	out := Box(theme.Default(), "Title", []string{"body line that is far too long for the box"}, 20, 4)
	want := []string{
		"╭─ Title ──────────╮",
		"│body line that is…│",
		"│                  │",
		"╰──────────────────╯",
	}
	if got := strings.Split(out, "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("box:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}
