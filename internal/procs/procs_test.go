package procs

import (
	"testing"
	"time"
)

type step struct {
	cpu  time.Duration // CPU time used in one window
	want int           // GOMAXPROCS set after it, 0 for none
}

func repeat(s step, n int) []step {
	steps := make([]step, n)
	for i := range steps {
		steps[i] = s
	}
	return steps
}

// TestGovernorFollowsTheLoad: a busy window gives every core at once; one
// thread comes only after calm of quiet windows in a row, and a window in
// between starts the calm again.
func TestGovernorFollowsTheLoad(t *testing.T) {
	quiet := step{cpu: window / 25}
	middling := step{cpu: window * 2 / 5}
	windows := int(calm / window)
	var steps []step
	steps = append(steps, repeat(quiet, windows-1)...)
	steps = append(steps, middling) // the calm starts again
	steps = append(steps, repeat(quiet, windows-1)...)
	steps = append(steps,
		step{cpu: quiet.cpu, want: 1}, // calm: one thread
		quiet,
		middling, // not busy enough to raise
		step{cpu: window * 4 / 5, want: 4},
		step{cpu: window * 4 / 5},
	)
	g := governor{most: 4, current: 4}
	for i, s := range steps {
		if got := g.observe(s.cpu, window); got != s.want {
			t.Fatalf("window %d (%v of CPU in %v): set %d, want %d", i, s.cpu, window, got, s.want)
		}
	}
}
