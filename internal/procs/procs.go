// Package procs lets a process run its Go code on one thread while it is
// nearly idle and on every core while it is busy (GOMAXPROCS).
//
// The lab's processes spend most of their life waking a few dozen times a
// second to pass on a message or answer a poll. With GOMAXPROCS at the
// number of cores, each wake-up also wakes an idle thread that looks for
// work and finds none (futex and nanosleep calls), which was much of an
// idle process's CPU (docs/performance.md). One thread
// does the same work without it, but a burst (a replay, a history, a
// backlog) needs every core, so the setting follows the process's own CPU
// use, measured every window:
//   - a window that used busyShare of a core or more gives every core at once;
//   - quiet windows in a row, each under quietShare of a core, for calm,
//     give one thread, and hand the memory a burst left back to the system
//     at once (the runtime's scavenger returns it with 1% of the threads'
//     time, and one thread is half the time of two).
//
// It starts with every core, so a process that starts busy (a rebuild)
// never waits for the setting.
package procs

import (
	"os"
	"runtime"
	"runtime/debug"
	"time"
)

const (
	window     = 250 * time.Millisecond
	busyShare  = 0.6
	quietShare = 0.3
	calm       = 3 * time.Second
)

// Govern follows the process's CPU use for the rest of its life. It does
// nothing where the environment sets GOMAXPROCS (someone chose), on one
// core, or where the process's CPU time cannot be read.
func Govern() {
	most := runtime.GOMAXPROCS(0)
	usedBefore, ok := cpuTime()
	if os.Getenv("GOMAXPROCS") != "" || most < 2 || !ok {
		return
	}
	go func() {
		g := governor{most: most, current: most}
		before := time.Now()
		for now := range time.Tick(window) {
			used, _ := cpuTime()
			if n := g.observe(used-usedBefore, now.Sub(before)); n > 0 {
				runtime.GOMAXPROCS(n)
				if n == 1 {
					debug.FreeOSMemory()
				}
			}
			usedBefore, before = used, now
		}
	}()
}

// governor decides GOMAXPROCS from one window's CPU time after another.
type governor struct {
	most, current int
	quietFor      time.Duration
}

// observe takes a window's CPU time and length and returns the GOMAXPROCS
// to set, or 0 to leave it.
func (g *governor) observe(cpu, wall time.Duration) int {
	if wall <= 0 {
		return 0
	}
	share := float64(cpu) / float64(wall)
	switch {
	case share >= busyShare:
		g.quietFor = 0
		if g.current != g.most {
			g.current = g.most
			return g.most
		}
	case share < quietShare:
		g.quietFor += wall
		if g.current != 1 && g.quietFor >= calm {
			g.current = 1
			return 1
		}
	default:
		g.quietFor = 0
	}
	return 0
}
