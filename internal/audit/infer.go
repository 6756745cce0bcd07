package audit

import (
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// Placing records that do not say which message they come from (a
// consumer of the user's that writes only the seed's four fields): each
// record is matched to a message of its sensor by its delta, in the order
// the records were written. A consumer reads a partition in order, so its
// records follow the messages' order, except where it reads again (after
// a crash, from its committed offset: the run of deltas repeats) or skips
// (its offsets committed past messages it never recorded). So each record
// is placed where the longest run of the following records matches the
// messages from there on, the next message first, then the nearest
// before or after it; a record whose delta no message yields stands for
// the next message (its delta taken from a stale reading). Deltas repeat
// in a fleet's data (an idle machine moves 0.00 h a message), so a place
// is inferred, never named: likely, not certain.

// MessageDelta is one valid message of a sensor and the delta the seed's
// rule records for it, in hundredths (zero deltas are not recorded).
type MessageDelta struct {
	store.Position
	HoursCents, KmCents int64
}

// Deltas lists the messages of sensor in partition that record a delta,
// in order.
func (t Truth) Deltas(sensor string, partition int32) []MessageDelta {
	es, ok := t.series[seriesKey{sensor, partition}]
	if !ok {
		return nil
	}
	var out []MessageDelta
	var prev entry
	first := true
	es.each(-1, es.last().offset, func(e entry) {
		if !first && e.records > prev.records {
			out = append(out, MessageDelta{Position: store.Position{Partition: partition, Offset: e.offset},
				HoursCents: e.hoursCents - prev.hoursCents, KmCents: e.kmCents - prev.kmCents})
		}
		prev, first = e, false
	})
	return out
}

// inferWindow bounds how far from the next message a place is looked for.
const inferWindow = 1000

// inferRun bounds the run of records compared at each candidate place.
const inferRun = 32

// InferPlaces gives each record (its delta in hundredths, in the order
// written) the index in msgs of the message it most likely comes from.
func InferPlaces(msgs []MessageDelta, recs []store.Totals) []int {
	places := make([]int, len(recs))
	if len(msgs) == 0 {
		for i := range places {
			places[i] = -1
		}
		return places
	}
	next := startPlace(msgs, recs)
	for i := range recs {
		at := bestPlace(msgs, recs[i:], next)
		if at < 0 {
			at = min(next, len(msgs)-1) // a delta the topic never yields: the next message's, stale
		}
		places[i] = at
		next = at + 1
	}
	return places
}

// startPlace is where the first record most likely falls: the message
// from which the longest run of records matches (the earliest of equals).
func startPlace(msgs []MessageDelta, recs []store.Totals) int {
	best, bestRun := 0, 0
	for s := range msgs {
		if r := run(msgs, recs, s); r > bestRun {
			best, bestRun = s, r
		}
	}
	return best
}

// bestPlace is the place of recs[0] near next: next itself if the run
// matches there, else the longest run within inferWindow before or after
// (nearest first); -1 when no message matches recs[0].
func bestPlace(msgs []MessageDelta, recs []store.Totals, next int) int {
	if next < len(msgs) && run(msgs, recs, next) > 0 {
		return next
	}
	best, bestRun := -1, 0
	for d := 1; d <= inferWindow; d++ {
		for _, s := range [2]int{next - d, next + d} {
			if s < 0 || s >= len(msgs) {
				continue
			}
			if r := run(msgs, recs, s); r > bestRun {
				best, bestRun = s, r
			}
		}
	}
	return best
}

// run is how many records from the first match the messages from s on.
func run(msgs []MessageDelta, recs []store.Totals, s int) int {
	n := 0
	for n < len(recs) && n < inferRun && s+n < len(msgs) &&
		msgs[s+n].HoursCents == recs[n].HoursCents && msgs[s+n].KmCents == recs[n].KmCents {
		n++
	}
	return n
}
