package board

import (
	"slices"
	"testing"
)

// TestKindsFirst: every kind's first group comes before any kind's second,
// and within a kind the board's order stands.
func TestKindsFirst(t *testing.T) {
	g := func(kind string, p int32) CauseGroup { return CauseGroup{Kind: kind, Partition: p} }
	stale, never := CauseStaleReading, CauseNeverRecorded
	in := []CauseGroup{g(stale, 0), g(stale, 1), g(stale, 2), g(never, 0), g(never, 1), g(never, 2)}
	want := []CauseGroup{g(stale, 0), g(never, 0), g(stale, 1), g(never, 1), g(stale, 2), g(never, 2)}
	if got := kindsFirst(in); !slices.Equal(got, want) {
		t.Errorf("kindsFirst:\n got %v\nwant %v", got, want)
	}
	one := []CauseGroup{g(never, 2), g(never, 0)}
	if got := kindsFirst(one); !slices.Equal(got, one) {
		t.Errorf("one kind: got %v, want it unchanged", got)
	}
	if got := kindsFirst(nil); len(got) != 0 {
		t.Errorf("no groups: got %v", got)
	}
}
