package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// The screen a presenter trusts: read at every poll (the usage cut is polled
// once a second; the screen is read four times a second), in steady state
// and around faults, at the designed size.

// steadyFor is how long each steady phase lasts: KRL_STEADY (a Go duration),
// 30 s by default to keep the suite's time down; KRL_STEADY=3m is the
// presenter-length run.
func steadyFor(t *testing.T) time.Duration {
	t.Helper()
	s := os.Getenv("KRL_STEADY")
	if s == "" {
		return 30 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("KRL_STEADY=%q: want a positive duration such as 90s", s)
	}
	return d
}

// Every column of both tables and the two footer keys, at 120x36.
var steadyLayout = []string{
	"# process", "strategy", "state", "pid", "up", "starts", "crashes", "lag",
	"rec h", "exp h", "drift h", "rec km", "exp km", "drift km", "recs", "verdict",
	"? help", "q quit",
}

// usageRow is one sensor's line of the usage table as shown.
type usageRow struct {
	sensor            string
	driftH, driftKm   int64 // cents
	verdict, rawDrift string
}

var usageRowRe = regexp.MustCompile(`(?m)^│[^│\n]*│(sensor-\d+|total)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([^\s│]+) *│`)

// usageRows parses the usage table (the right-hand panel beside the
// sensors) of a screen; the total row is under "total".
func usageRows(screen string) map[string]usageRow {
	rows := map[string]usageRow{}
	for _, m := range usageRowRe.FindAllStringSubmatch(screen, -1) {
		r := usageRow{sensor: m[1], verdict: m[9], rawDrift: m[4] + " / " + m[7]}
		r.driftH, _ = parseCents(m[4])
		r.driftKm, _ = parseCents(m[7])
		rows[m[1]] = r
	}
	return rows
}

func parseCents(s string) (int64, bool) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
	if err != nil {
		return 0, false
	}
	return store.Cents(f), true
}

// layoutProblem names what is missing from a 120x36 screen ("" = nothing).
func layoutProblem(screen string) string {
	for _, want := range steadyLayout {
		if !strings.Contains(screen, want) {
			return fmt.Sprintf("%q is missing", want)
		}
	}
	return ""
}

// verdictTally counts the verdict cells read, by word.
type verdictTally map[string]int

func (v verdictTally) String() string {
	var parts []string
	for _, w := range []string{"exact", "overcount", "over-counted", "lost", "mixed", "pending"} {
		if v[w] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", v[w], w))
		}
	}
	for w, n := range v {
		if !strings.Contains("exact overcount over-counted lost mixed pending", w) {
			parts = append(parts, fmt.Sprintf("%d %q", n, w))
		}
	}
	return strings.Join(parts, ", ")
}

// watchSteady reads the screen every 250 ms for d and fails at the first
// screen with a column or footer key missing, a sensor whose verdict is
// not exact, or consumer-current's lag above one round of the fleet. It returns how many screens and verdict cells it read.
func watchSteady(t *testing.T, tm *tmuxTerm, what string, d time.Duration) (screens int, tally verdictTally) {
	t.Helper()
	tally = verdictTally{}
	currentMax := int64(-1)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		s := tm.capture()
		screens++
		if p := layoutProblem(s); p != "" {
			t.Fatalf("%s, screen %d: %s:\n%s", what, screens, p, s)
		}
		if strings.Contains(s, "WRONG") {
			t.Fatalf("%s, screen %d: a sensor's state reads WRONG with nothing broken:\n%s", what, screens, s)
		}
		rows := usageRows(s)
		if len(rows) < 11 {
			t.Fatalf("%s, screen %d: %d usage rows, want 10 sensors and the total:\n%s", what, screens, len(rows), s)
		}
		// Keeping up, whatever its lag's size: never judged behind.
		for name, r := range procRows(s) {
			if r.LagStatus != "" && r.LagStatus != "OK" {
				t.Fatalf("%s, screen %d: %s's lag %s judged %s with nothing broken:\n%s", what, screens, name, r.Lag, r.LagStatus, s)
			}
			if n, ok := lagValue(r.Lag); ok && name == "consumer-current" {
				currentMax = max(currentMax, n)
				// Its lag is its own position against the watermark it
				// fetched with: keeping up, it is never more than the one
				// round of 10 messages the fleet publishes each second.
				if n > 10 {
					t.Fatalf("%s, screen %d: consumer-current's lag %d, more than one round of the fleet, while it keeps up:\n%s", what, screens, n, s)
				}
			}
		}
		for id, r := range rows {
			tally[r.verdict]++
			if r.verdict != "exact" {
				t.Fatalf("%s, screen %d: %s reads %s %s with nothing broken:\n%s", what, screens, id, r.rawDrift, r.verdict, s)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%s: %d screens in %s, verdict cells: %s; consumer-current's lag at most %d", what, screens, d, tally, currentMax)
	return screens, tally
}

// awaitAllExact waits until every sensor and the total read exact.
func awaitAllExact(tm *tmuxTerm, what string, timeout time.Duration) string {
	return tm.await(what, timeout, func(s string) error {
		rows := usageRows(s)
		if len(rows) < 11 {
			return fmt.Errorf("%d usage rows", len(rows))
		}
		for id, r := range rows {
			if r.verdict != "exact" {
				return fmt.Errorf("%s reads %s %s", id, r.rawDrift, r.verdict)
			}
		}
		return nil
	})
}

// TestDashboardSteadyVerdicts runs the dashboard in tmux at 120x36 at the
// default rate and reads it as the audience does:
//
//  1. guarded, then naive, each for KRL_STEADY (30 s; 3m for the
//     presenter-length run): every screen has
//     every column and the footer's ? help and q quit, no sensor state
//     reads WRONG, and every verdict is exact (nothing is broken, so
//     anything else cries wolf);
//  2. e (earliest) in naive over-counts; R gives a new baseline in which
//     every verdict is exact within 10 s;
//  3. one crash of each kind in naive (x, then the crash points
//     after-delta and after-checkpoint), restarted with r; no screen ever
//     says lost; then, with the producer paused and everything caught up,
//     every sensor's drift on screen equals the store's totals minus what
//     the topic yields, computed independently after the run.
func TestDashboardSteadyVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: minutes of a real stack")
	}
	steady := steadyFor(t)
	d := newDashboard(t)
	tm := startTmuxDashboard(t, d, "--usage-mode", "guarded", "--seed", "23")
	awaitStackUp(t, tm)
	awaitAllExact(tm, "every verdict exact once the first cut is in", 60*time.Second)

	watchSteady(t, tm, "guarded, steady", steady)

	tm.key("m")
	tm.await("consumer-usage restarted naive", 30*time.Second, func(s string) error {
		if !strings.Contains(s, "mode naive (m)") {
			return fmt.Errorf("mode not naive yet")
		}
		if r := procRows(s)["consumer-usage"]; r.State != "running" || r.Starts != 2 {
			return fmt.Errorf("consumer-usage %+v", r)
		}
		return nil
	})
	watchSteady(t, tm, "naive, steady", steady)

	// 2. An over-count, then a new baseline.
	tm.key("e")
	tm.await("the naive replay from earliest over-counts", 60*time.Second, func(s string) error {
		if r := usageRows(s)["total"]; r.verdict != "overcount" && r.verdict != "over-counted" {
			return fmt.Errorf("total reads %s %s", r.rawDrift, r.verdict)
		}
		return nil
	})
	tm.key("R")
	pressed := time.Now()
	awaitAllExact(tm, "every verdict exact after R", 30*time.Second)
	if took := time.Since(pressed); took > 10*time.Second {
		t.Errorf("R: every verdict exact %.1f s after the key, want within 10 s", took.Seconds())
	} else {
		t.Logf("R: every verdict exact %.1f s after the key", took.Seconds())
	}

	// 3. One crash of each kind, read at every poll until it settles. The
	// baseline's group first commits on every partition: a crash before
	// that restarts a partition at the end (latest, no commit), and with
	// the producer paused later its lag would stay "no commit" for good.
	tm.key("3")
	tm.await("consumer-usage's new group committed on every partition", 60*time.Second, func(s string) error {
		if _, ok := lagValue(procRows(s)["consumer-usage"].Lag); !ok {
			return fmt.Errorf("consumer-usage lag %q", procRows(s)["consumer-usage"].Lag)
		}
		return nil
	})
	var lostSeen []string
	watch := func(what string, until func(string) error, timeout time.Duration) string {
		t.Helper()
		return tm.await(what, timeout, func(s string) error {
			for id, r := range usageRows(s) {
				if r.verdict == "lost" || r.verdict == "mixed" {
					lostSeen = append(lostSeen, fmt.Sprintf("%s %s %s", id, r.rawDrift, r.verdict))
				}
			}
			return until(s)
		})
	}
	usageIs := func(state string) func(string) error {
		return func(s string) error {
			if r := procRows(s)["consumer-usage"]; !strings.HasPrefix(r.State, state) {
				return fmt.Errorf("consumer-usage %s", r.State)
			}
			return nil
		}
	}
	crashedAt := func(point string) func(string) error {
		return func(s string) error {
			if err := usageIs("crashed")(s); err != nil {
				return err
			}
			if !strings.Contains(s, "crash point "+point+" reached") {
				return fmt.Errorf("no %s crash in the events", point)
			}
			return nil
		}
	}
	producerPaused := func(s string) error {
		if st := procRows(s)["producer"].State; !strings.Contains(st, "paused") {
			return fmt.Errorf("producer %s", st)
		}
		return nil
	}
	restart := func() {
		t.Helper()
		tm.key("r")
		watch("consumer-usage running again", usageIs("running"), 30*time.Second)
	}
	tm.key("x")
	watch("consumer-usage crashed by x", usageIs("crashed"), 10*time.Second)
	restart()
	// after-delta: c arms it; the next message that writes a record fires it.
	tm.key("c")
	watch("consumer-usage crashed at after-delta", crashedAt("after-delta"), 30*time.Second)
	restart()
	// after-checkpoint while the producer runs: c c passes over
	// after-delta (which fires within a fraction of a second) and arms
	// after-checkpoint alone, once c rests.
	tm.key("c")
	tm.key("c")
	watch("consumer-usage crashed at after-checkpoint", crashedAt("after-checkpoint"), 30*time.Second)
	restart()
	tm.key("p")
	watch("producer paused and every consumer caught up", func(s string) error {
		if err := producerPaused(s); err != nil {
			return err
		}
		rows := procRows(s)
		for _, n := range []string{"consumer-current", "consumer-usage"} {
			if rows[n].Lag != "0" {
				return fmt.Errorf("%s lag %q", n, rows[n].Lag)
			}
		}
		for id, r := range usageRows(s) {
			if r.verdict == "pending" {
				return fmt.Errorf("%s pending", id)
			}
		}
		return nil
	}, 90*time.Second)
	// Settled: the same screen a few polls later.
	time.Sleep(3 * time.Second) // a few usage polls (1 s each), not a synchronisation
	final := tm.capture()
	if len(lostSeen) > 0 {
		t.Errorf("a naive consumer never loses usage here, yet the screen said: %v", lostSeen)
	}
	shown := usageRows(final)
	tm.key("q")
	if code := tm.awaitExit(60 * time.Second); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}

	rt := d.readRunTruth()
	var over int
	for id, want := range rt.Expected {
		got := rt.Stored[id]
		dh, dk := got.HoursCents-want.HoursCents, got.KmCents-want.KmCents
		r, ok := shown[id]
		if !ok {
			t.Errorf("%s: no usage row on the final screen:\n%s", id, final)
			continue
		}
		if r.driftH != dh || r.driftKm != dk {
			t.Errorf("%s: the screen shows drift %s, the store minus the topic is %+.2f h / %+.2f km",
				id, r.rawDrift, float64(dh)/100, float64(dk)/100)
		}
		if dh != 0 || dk != 0 {
			over++
		}
	}
	t.Logf("after the crashes: %d of %d sensors over-counted, every drift on screen equal to the store minus the topic",
		over, len(rt.Expected))
}
