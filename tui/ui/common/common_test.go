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
		samples        []int64
		cells, perCell int
		want           string
	}{
		{[]int64{0, 0, 0}, 3, 1, "▁▁▁"},
		{[]int64{0, 7, 14}, 3, 1, "▁▅█"},
		{[]int64{10, 10, 10, 10}, 4, 1, "████"},     // steady at its peak
		{[]int64{12, 22, 42, 62}, 4, 1, "▃▄▆█"},     // a growing lag climbs
		{[]int64{40, 40, 0}, 3, 1, "██▁"},           // the newest agrees with a lag of 0
		{[]int64{-1, 5, -1}, 3, 1, "·▅·"},           // 5 of the floor of 10
		{[]int64{2, 2, 2}, 3, 1, "▃▃▃"},             // a small steady lag draws low bars
		{[]int64{1, 200}, 4, 1, "  ▂█"},             // the newest on the right, blank before the history
		{[]int64{0, 0, 3, 0, 1500, 0}, 3, 2, "▁▂▁"}, // a bar is the largest of its seconds, the last the newest
		{[]int64{0, 0, 1500, 0, 3, 6}, 3, 2, "▁█▂"},
		{[]int64{-1, -1, -1, 4}, 2, 2, "·▄"},
		{nil, 4, 15, "    "},
	}
	for _, tc := range tests {
		if got := Sparkline(tc.samples, tc.cells, tc.perCell, 10); got != tc.want {
			t.Errorf("Sparkline(%v, %d, %d) = %q, want %q", tc.samples, tc.cells, tc.perCell, got, tc.want)
		}
	}
	// A fleet of 10 sensors: one interval behind is 10 of a floor of 50,
	// low bars; only a lag five intervals deep reaches the top.
	if got := Sparkline([]int64{10, 10, 10, 10}, 4, 1, SparkFloor(10)); got != "▃▃▃▃" {
		t.Errorf("a steady lag of one interval with 10 sensors: %q", got)
	}
	if got := Sparkline([]int64{10, 30, 50}, 3, 1, SparkFloor(10)); got != "▃▅█" {
		t.Errorf("a lag growing to five intervals: %q", got)
	}
	// Before the producer says its fleet, the first sample of one interval
	// in flight is as calm as every later one, not a full bar.
	if got := Sparkline([]int64{10}, 1, 1, SparkFloor(0)); got != "▃" {
		t.Errorf("the first sample of one interval, fleet unknown: %q", got)
	}
	// The window is fixed: 60 samples in 15 bars, whatever the history holds.
	long := make([]int64, 100)
	if got := Sparkline(long, 15, 4, 10); len([]rune(got)) != 15 {
		t.Errorf("window of %d bars", len([]rune(got)))
	}
}

func TestFitNumbers(t *testing.T) {
	tests := []struct{ got, want string }{
		{FitNumber(99999.99, 8), "99999.99"},
		{FitNumber(999999.9, 8), "999999.9"},
		{FitNumber(9999999.9, 8), "10000000"},
		{FitSigned2(9999999, 9), "+99999.99"},
		{FitSigned2(99999990, 9), "+999999.9"},
		{FitSigned2(-99999990, 9), "-999999.9"},
		{FitCount(99999, 6), "99,999"},
		{FitCount(999990, 6), "999.9k"},
		{FitCount(1044980, 9), "1,044,980"},
		{FitCount(1044980, 7), "1.04M"},
		{FitCount(1044980, 5), "1.04M"},
		{FitCount(12345678, 5), "12.3M"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTableFixedColumns(t *testing.T) {
	cols := []Column{
		{Title: "name", Width: 4},
		{Title: "value", Align: Right, Width: 7},
		{Title: "note", Width: 5},
	}
	rows := [][]Cell{
		{Plain("a"), Plain("1.00"), Plain("nnnn")},
		{Plain("bbbbbb"), Plain("123.45"), Plain("much too long")},
	}
	if TableWidth(cols) != 18 {
		t.Fatalf("width %d", TableWidth(cols))
	}
	head, lines := Table(nil, cols, rows, 20, lipgloss.NewStyle(), nil)
	want := []string{
		"name   value note   ",
		"a       1.00 nnnn   ",
		"bbb…  123.45 much…  ",
	}
	if got := append([]string{head}, lines...); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Other values, same columns: nothing moves.
	head2, _ := Table(nil, cols, [][]Cell{{Plain("x"), Plain("1"), Plain("")}}, 20, lipgloss.NewStyle(), nil)
	if head2 != head {
		t.Fatalf("header moved: %q vs %q", head2, head)
	}
}

func TestBox(t *testing.T) {
	out := Box(theme.New(nil), "Title", []string{"body line that is far too long for the box"}, 20, 4)
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

func TestWrapKeepsWords(t *testing.T) {
	got := Wrap("group demo-current-1a2b3c4d → demo-current-5e6f7a8b, read 1234", 30)
	want := []string{"group demo-current-1a2b3c4d →", "demo-current-5e6f7a8b, read", "1234"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
	if got := Wrap("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Fatalf("long word: %q", got)
	}
}

func TestShown(t *testing.T) {
	for _, c := range []struct{ n, h, shown, more int }{
		{10, 0, 0, 0}, {10, -1, 0, 0}, {0, 5, 0, 0}, {5, 5, 5, 0}, {6, 5, 4, 2}, {1000, 20, 19, 981}, {2, 1, 0, 2},
	} {
		if s, m := Shown(c.n, c.h); s != c.shown || m != c.more {
			t.Errorf("Shown(%d, %d) = %d, %d; want %d, %d", c.n, c.h, s, m, c.shown, c.more)
		}
	}
}

func TestStackSharesBorders(t *testing.T) {
	st := theme.New(lipgloss.NewRenderer(nil))
	top := Box(st, "Top", []string{"a"}, 20, 3)
	left := Box(st, "L", []string{"b"}, 13, 3)
	right := Box(st, "R", []string{"c"}, 8, 3)
	events := Box(st, "Events", []string{"d"}, 20, 3)
	got := Stack(st, top, Beside(st, left, right), events)
	want := strings.Join([]string{
		"╭─ Top ────────────╮",
		"│a                 │",
		"├─ L ───────┬─ R ──┤",
		"│b          │c     │",
		"├─ Events ──┴──────┤",
		"│d                 │",
		"╰──────────────────╯",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
