package health

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func check(t *testing.T, r Report, status string, stuckFor time.Duration, lag int64) {
	t.Helper()
	if r.Status != status || r.StuckForMs != stuckFor.Milliseconds() || r.Lag == nil || *r.Lag != lag {
		l := "null"
		if r.Lag != nil {
			l = time.Duration(*r.Lag).String()
		}
		t.Fatalf("report %+v (lag %s), want status %s stuck for %v lag %d", r, l, status, stuckFor, lag)
	}
	wantCode := 200
	if status == Stuck {
		wantCode = 503
	}
	if r.HTTPStatus() != wantCode {
		t.Fatalf("HTTP %d, want %d", r.HTTPStatus(), wantCode)
	}
}

func TestStuckOnlyWithLagAndNoProgress(t *testing.T) {
	tr := NewTracker(10 * time.Second)
	if r := tr.Report(at(0)); r.Status != OK || r.Lag != nil || r.LastPollAgeMs != -1 {
		t.Fatalf("fresh tracker %+v", r)
	}
	tr.Assign(at(0), map[int32]int64{0: 5, 1: 7})
	tr.Watermark(at(0), 0, 5)
	tr.Watermark(at(0), 1, 7)
	tr.Polled(at(0))
	// Caught up: healthy however long nothing arrives.
	check(t, tr.Report(at(100)), OK, 0, 0)
	if r := tr.Report(at(100)); !r.CaughtUp || r.LastPollAgeMs != 100000 || r.Offsets != 12 {
		t.Fatalf("caught-up report %+v", r)
	}

	// Work appears at 100 s; it is waited on from then, not from the last event.
	tr.Watermark(at(100), 0, 8)
	check(t, tr.Report(at(105)), OK, 5*time.Second, 3)
	check(t, tr.Report(at(109.999)), OK, 9999*time.Millisecond, 3)
	check(t, tr.Report(at(110)), Stuck, 10*time.Second, 3)
	// More work while stuck does not restart the clock.
	tr.Watermark(at(111), 1, 9)
	check(t, tr.Report(at(112)), Stuck, 12*time.Second, 5)

	// Progress restarts it; catching up clears it.
	tr.Received(at(113), 0, 5)
	tr.Done(at(113), 0, 5, "")
	check(t, tr.Report(at(113)), OK, 0, 4)
	check(t, tr.Report(at(123)), Stuck, 10*time.Second, 4)
	for off := int64(6); off < 8; off++ {
		tr.Done(at(124), 0, off, "")
	}
	tr.Done(at(124), 1, 7, "bad json")
	tr.Done(at(124), 1, 8, "")
	check(t, tr.Report(at(200)), OK, 0, 0)
	r := tr.Report(at(200))
	if r.Processed != 4 || r.Invalid != 1 || r.LastInvalid == nil || *r.LastInvalid != "bad json" || r.LastProgressAgeMs != 76000 {
		t.Fatalf("counters %+v", r)
	}
}

// A message in hand is work even when no watermark was learned: a loop
// blocked on it (a store that does not answer) turns stuck.
func TestMessageInHandIsWork(t *testing.T) {
	tr := NewTracker(2 * time.Second)
	tr.Assign(at(0), map[int32]int64{0: -1})
	if r := tr.Report(at(5)); r.Status != OK || r.Lag != nil {
		t.Fatalf("unknown positions %+v", r)
	}
	tr.Received(at(5), 0, 41)
	check(t, tr.Report(at(6)), OK, time.Second, 1)
	check(t, tr.Report(at(7)), Stuck, 2*time.Second, 1)
	tr.Done(at(8), 0, 41, "")
	check(t, tr.Report(at(20)), OK, 0, 0)
}

func TestRevokeAndReassign(t *testing.T) {
	tr := NewTracker(time.Second)
	tr.Assign(at(0), map[int32]int64{0: 0})
	tr.Watermark(at(0), 0, 10)
	check(t, tr.Report(at(1)), Stuck, time.Second, 10)
	tr.Revoke(at(2), []int32{0})
	if r := tr.Report(at(3)); r.Status != OK || r.Lag != nil || len(r.Partitions) != 0 {
		t.Fatalf("after revoke %+v", r)
	}
	tr.Assign(at(4), map[int32]int64{0: 3})
	tr.Watermark(at(4), 0, 10)
	check(t, tr.Report(at(4.5)), OK, 500*time.Millisecond, 7)
	// Unknown partitions and stale answers are ignored.
	tr.Done(at(4.6), 9, 100, "")
	tr.Watermark(at(4.6), 0, -1)
	tr.Done(at(4.7), 0, 1, "") // behind the position: not progress
	check(t, tr.Report(at(5)), Stuck, time.Second, 7)
	if NewTracker(0).Report(at(0)).StuckAfterMs != DefaultStuckAfter.Milliseconds() {
		t.Fatal("default stuck-after")
	}
}

// DoneUpTo counts a run of records as Received and Done one by one would.
func TestDoneUpToIsEachRecordDone(t *testing.T) {
	one, run := NewTracker(time.Second), NewTracker(time.Second)
	for _, tr := range []*Tracker{one, run} {
		tr.Assign(at(0), map[int32]int64{0: 10, 1: -1})
		tr.Watermark(at(0), 0, 20)
	}
	for off := int64(10); off < 15; off++ {
		reason := ""
		if off == 12 || off == 13 {
			reason = "bad " + string(rune('a'+off-12))
		}
		one.Received(at(1), 0, off)
		one.Done(at(1), 0, off, reason)
	}
	one.Received(at(1), 1, 3)
	one.Done(at(1), 1, 3, "")
	run.DoneUpTo(at(1), 0, 14, 3, 2, "bad b")
	run.DoneUpTo(at(1), 1, 3, 1, 0, "")
	a, b := one.Report(at(1.5)), run.Report(at(1.5))
	if a.Processed != 4 || a.Invalid != 2 || *a.LastInvalid != "bad b" || *a.Lag != 5 {
		t.Fatalf("one by one %+v", a)
	}
	if b.Processed != a.Processed || b.Invalid != a.Invalid || *b.LastInvalid != *a.LastInvalid ||
		*b.Lag != *a.Lag || b.Offsets != a.Offsets || b.StuckForMs != a.StuckForMs || b.LastProgressAgeMs != a.LastProgressAgeMs {
		t.Fatalf("a run %+v, one by one %+v", b, a)
	}
	run.DoneUpTo(at(2), 0, 12, 1, 0, "") // already past: counted, no progress
	if r := run.Report(at(2)); r.Offsets != 15+4 || r.LastProgressAgeMs != 1000 {
		t.Fatalf("an older run moved the position: %+v", r)
	}
}
