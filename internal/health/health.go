// Package health is a consumer's own view of whether it is making
// progress, as GET /healthz answers it. It is pure logic: every call
// carries its own time, so tests drive it with a fake clock.
//
// The rule: a consumer is stuck when it has had work (lag > 0 by what it
// knows of the high watermarks, or a message in hand) and its positions
// have not advanced for StuckAfter. Caught up (lag 0) is healthy however
// long nothing arrives; a partition whose high watermark is unknown counts
// no lag. A process that cannot answer at all (frozen, hung) is judged by
// whoever asks: no answer is not a 200.
package health

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// DefaultStuckAfter is the default of the consumers' --stuck-after flag.
const DefaultStuckAfter = 10 * time.Second

// Status words of a Report.
const (
	OK    = "ok"
	Stuck = "stuck"
)

// Report is the GET /healthz body.
type Report struct {
	Status string `json:"status"` // OK or Stuck
	// StuckForMs: how long lag has been > 0 without progress (0 when not
	// waiting). Status is Stuck once it reaches StuckAfterMs.
	StuckForMs   int64 `json:"stuck_for_ms"`
	StuckAfterMs int64 `json:"stuck_after_ms"`
	// LastPollAgeMs: since the consumer loop last polled the broker (-1
	// before its first poll).
	LastPollAgeMs int64 `json:"last_poll_age_ms"`
	// LastProgressAgeMs: since a position last advanced (-1: never).
	LastProgressAgeMs int64 `json:"last_progress_age_ms"`
	// Offsets is the sum of the next offsets of the assigned partitions:
	// it grows while the consumer advances.
	Offsets int64 `json:"offsets"`
	// Lag by what the consumer knows of the high watermarks; null when no
	// assigned partition's watermark is known.
	Lag       *int64 `json:"lag"`
	CaughtUp  bool   `json:"caught_up"`
	Processed int64  `json:"processed"`
	Invalid   int64  `json:"invalid"`
	// LastInvalid is the reason the latest invalid message was skipped.
	LastInvalid *string     `json:"last_invalid"`
	Partitions  []Partition `json:"partitions"`
}

// Partition is one assigned partition as the tracker knows it.
type Partition struct {
	Partition     int32 `json:"partition"`
	Next          int64 `json:"next"`           // next offset to process; -1 unknown
	HighWatermark int64 `json:"high_watermark"` // -1 unknown
}

// HTTPStatus is the code GET /healthz answers with: 503 when stuck.
func (r Report) HTTPStatus() int {
	if r.Status == Stuck {
		return 503
	}
	return 200
}

type part struct {
	next, hwm int64
}

// Tracker follows one consumer's progress. Safe for concurrent use: the
// consumer loop feeds it, the HTTP handler reads it.
type Tracker struct {
	mu         sync.Mutex
	stuckAfter time.Duration
	parts      map[int32]*part
	// all holds the same parts as a slice: the lag is summed twice per
	// message, and a map iteration costs more than the sum (pprof of a
	// 1M-record replay: 11% of its CPU).
	all        []*part
	lastPoll   time.Time
	progressAt time.Time
	// waitingSince: when the lag last became > 0 or the positions last
	// advanced, whichever is later; zero while the lag is 0.
	waitingSince time.Time
	processed    int64
	invalid      int64
	lastInvalid  string
	hasInvalid   bool
}

// NewTracker returns a tracker with nothing assigned; stuckAfter <= 0 means
// DefaultStuckAfter.
func NewTracker(stuckAfter time.Duration) *Tracker {
	if stuckAfter <= 0 {
		stuckAfter = DefaultStuckAfter
	}
	return &Tracker{stuckAfter: stuckAfter, parts: map[int32]*part{}}
}

// lagLocked is the known lag and whether any watermark is known.
func (t *Tracker) lagLocked() (int64, bool) {
	var lag int64
	known := false
	for _, p := range t.all {
		if p.hwm < 0 || p.next < 0 {
			continue
		}
		known = true
		lag += max(0, p.hwm-p.next)
	}
	return lag, known
}

// change runs f and keeps waitingSince right: the clock restarts when the
// positions advance or when work appears after none.
func (t *Tracker) change(now time.Time, f func() (advanced bool)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	before, _ := t.lagLocked()
	advanced := f()
	after, _ := t.lagLocked()
	switch {
	case after == 0:
		t.waitingSince = time.Time{}
	case advanced || before == 0 || t.waitingSince.IsZero():
		t.waitingSince = now
	}
	if advanced {
		t.progressAt = now
	}
}

// Assign replaces the assignment: next offsets per partition (-1 unknown).
func (t *Tracker) Assign(now time.Time, next map[int32]int64) {
	t.change(now, func() bool {
		t.parts = map[int32]*part{}
		for p, n := range next {
			t.parts[p] = &part{next: n, hwm: -1}
		}
		t.all = slices.Collect(maps.Values(t.parts))
		return true // a new assignment is a fresh start
	})
}

// Revoke drops partitions.
func (t *Tracker) Revoke(now time.Time, parts []int32) {
	t.change(now, func() bool {
		for _, p := range parts {
			delete(t.parts, p)
		}
		t.all = slices.Collect(maps.Values(t.parts))
		return false
	})
}

// Polled: the consumer loop asked the broker for messages.
func (t *Tracker) Polled(now time.Time) {
	t.mu.Lock()
	t.lastPoll = now
	t.mu.Unlock()
}

// Received: a message at offset is in hand, so the partition's end is at
// least offset+1 (work is known even before a watermark is).
func (t *Tracker) Received(now time.Time, partition int32, offset int64) {
	t.change(now, func() bool {
		p := t.parts[partition]
		if p == nil {
			return false
		}
		p.hwm = max(p.hwm, offset+1)
		if p.next < 0 {
			p.next = offset
		}
		return false
	})
}

// Done: the message at offset is finished (applied or skipped); invalid
// gives the reason it was skipped as invalid ("" when valid).
func (t *Tracker) Done(now time.Time, partition int32, offset int64, invalid string) {
	t.change(now, func() bool {
		if invalid != "" {
			t.invalid++
			t.lastInvalid, t.hasInvalid = invalid, true
		} else {
			t.processed++
		}
		p := t.parts[partition]
		if p == nil || offset+1 <= p.next {
			return false
		}
		p.next = offset + 1
		p.hwm = max(p.hwm, p.next)
		return true
	})
}

// DoneUpTo is Received and Done for a run of records of one partition
// ending at offset, handled together: valid of them applied, invalid
// skipped (lastInvalid the reason of the last one).
func (t *Tracker) DoneUpTo(now time.Time, partition int32, offset int64, valid, invalid int64, lastInvalid string) {
	t.change(now, func() bool {
		t.processed += valid
		if invalid > 0 {
			t.invalid += invalid
			t.lastInvalid, t.hasInvalid = lastInvalid, true
		}
		p := t.parts[partition]
		if p == nil || offset+1 <= p.next {
			return false
		}
		p.next = offset + 1
		p.hwm = max(p.hwm, p.next)
		return true
	})
}

// Watermark: the newest high watermark of a partition the client knows.
func (t *Tracker) Watermark(now time.Time, partition int32, hwm int64) {
	if hwm < 0 {
		return
	}
	t.change(now, func() bool {
		if p := t.parts[partition]; p != nil {
			p.hwm = max(p.hwm, hwm)
		}
		return false
	})
}

// Report is the health as of now.
func (t *Tracker) Report(now time.Time) Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Report{Status: OK, StuckAfterMs: t.stuckAfter.Milliseconds(), LastPollAgeMs: -1, LastProgressAgeMs: -1,
		Processed: t.processed, Invalid: t.invalid, Partitions: []Partition{}}
	if !t.lastPoll.IsZero() {
		r.LastPollAgeMs = max(0, now.Sub(t.lastPoll).Milliseconds())
	}
	if !t.progressAt.IsZero() {
		r.LastProgressAgeMs = max(0, now.Sub(t.progressAt).Milliseconds())
	}
	if t.hasInvalid {
		reason := t.lastInvalid
		r.LastInvalid = &reason
	}
	for _, id := range slices.Sorted(maps.Keys(t.parts)) {
		p := t.parts[id]
		r.Partitions = append(r.Partitions, Partition{Partition: id, Next: p.next, HighWatermark: p.hwm})
		if p.next > 0 {
			r.Offsets += p.next
		}
	}
	lag, known := t.lagLocked()
	if known {
		r.Lag = &lag
		r.CaughtUp = lag == 0
	}
	if lag > 0 && !t.waitingSince.IsZero() {
		r.StuckForMs = max(0, now.Sub(t.waitingSince).Milliseconds())
		if now.Sub(t.waitingSince) >= t.stuckAfter {
			r.Status = Stuck
		}
	}
	return r
}
