package board

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Event is one timeline entry.
type Event struct {
	Seq   uint64 // increasing from 1; see EventsSince
	At    time.Time
	Proc  string // "" for the dashboard itself
	Level Level
	Text  string

	invalidRun int // >0: a run of folded invalid-message events
}

// String is the entry as one log line: "15:04:05 consumer-usage crashed: …".
func (e Event) String() string {
	s := e.At.Format("15:04:05") + " "
	if e.Proc != "" {
		s += e.Proc + " "
	}
	return s + e.Text
}

// dupWindow: the same entry (process, level and text) twice within this
// time is one fact reported twice (the lab and the UI both applying an
// input, two pollers seeing one failure), shown once.
const dupWindow = 2 * time.Second

// event adds an entry in time order: inputs from different sources
// (supervisor, pollers, status streams) arrive slightly out of order, and
// the timeline reads by time. An entry that repeats a recent one is
// dropped.
func (b *Board) event(at time.Time, proc string, level Level, text string) {
	if at.IsZero() {
		at = b.now
	}
	i := len(b.events)
	for i > 0 && b.events[i-1].At.After(at) {
		i--
	}
	for _, e := range b.events[max(0, i-8):min(len(b.events), i+8)] {
		if e.Proc == proc && e.Level == level && e.Text == text && e.At.Sub(at).Abs() < dupWindow {
			return
		}
	}
	b.nextSeq++
	e := Event{Seq: b.nextSeq, At: at, Proc: proc, Level: level, Text: text}
	b.events = append(b.events, Event{})
	copy(b.events[i+1:], b.events[i:])
	b.events[i] = e
	if over := len(b.events) - TimelineLen; over > 0 {
		b.events = append([]Event(nil), b.events[over:]...)
	}
}

// Events returns the timeline, oldest first (by time).
func (b *Board) Events() []Event { return append([]Event(nil), b.events...) }

// EventsSince returns the entries with Seq > seq in the order they were
// added, for a headless loop that logs new entries as they come (an entry
// inserted before later ones in time is still new to it). A folded entry
// (a run of invalid messages) keeps its Seq while its text grows.
func (b *Board) EventsSince(seq uint64) []Event {
	var out []Event
	for _, e := range b.events {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// invalidEvent folds a run of invalid-message events of one process into
// one timeline entry so a burst of bad records does not flush the timeline.
func (b *Board) invalidEvent(at time.Time, name string, e status.Event) {
	detail := fmt.Sprintf("partition %d offset %d: %s", e.Partition, e.Offset, e.Error)
	if n := len(b.events); n > 0 {
		last := &b.events[n-1]
		if last.Proc == name && last.invalidRun > 0 {
			last.invalidRun++
			last.At = at
			last.Text = fmt.Sprintf("%d invalid messages skipped (last: %s)", last.invalidRun, detail)
			return
		}
	}
	b.event(at, name, LevelWarn, "invalid message skipped: "+detail)
	b.events[len(b.events)-1].invalidRun = 1
}
