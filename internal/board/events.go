package board

import (
	"time"
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

func (b *Board) event(at time.Time, proc string, level Level, text string) {
	if at.IsZero() {
		at = b.now
	}
	b.nextSeq++
	b.events = append(b.events, Event{Seq: b.nextSeq, At: at, Proc: proc, Level: level, Text: text})
	if over := len(b.events) - TimelineLen; over > 0 {
		b.events = append([]Event(nil), b.events[over:]...)
	}
}

// Events returns the timeline, oldest first.
func (b *Board) Events() []Event { return append([]Event(nil), b.events...) }

// EventsSince returns the entries with Seq > seq, oldest first, for a
// headless loop that logs new entries as they come. A folded entry (a run
// of invalid messages) keeps its Seq while its text grows.
func (b *Board) EventsSince(seq uint64) []Event {
	for i, e := range b.events {
		if e.Seq > seq {
			return append([]Event(nil), b.events[i:]...)
		}
	}
	return nil
}
