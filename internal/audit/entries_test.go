package audit

import (
	"math/rand/v2"
	"testing"
)

// TestEntryLogAnswersAsASlice: the compact log answers every search and
// window as a plain slice of the same entries does, and a view taken
// earlier keeps answering for its prefix while the log grows.
func TestEntryLogAnswersAsASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var log entryLog
	var all []entry
	type taken struct {
		v entryView
		n int
	}
	var views []taken
	e := entry{offset: rng.Int64N(5)}
	for i := range 3*entriesPerBlock + 17 {
		if i > 0 {
			e.offset += 1 + rng.Int64N(40)
			if rng.IntN(4) > 0 {
				e.records++
				e.hoursCents += rng.Int64N(300) - 20 // a delta may be 0 or negative
				e.kmCents += rng.Int64N(100_000)
			}
		}
		log.add(e)
		all = append(all, e)
		if rng.IntN(50) == 0 {
			views = append(views, taken{log.view(), len(all)})
		}
	}
	views = append(views, taken{log.view(), len(all)})
	for _, tv := range views {
		es := all[:tv.n]
		if tv.v.len() != tv.n || tv.v.last() != es[tv.n-1] {
			t.Fatalf("view of %d: len %d, last %+v, want %+v", tv.n, tv.v.len(), tv.v.last(), es[tv.n-1])
		}
		for range 200 {
			at := rng.Int64N(es[tv.n-1].offset+10) - 2
			if got, want := tv.v.through(at), sliceThrough(es, at); got != want {
				t.Fatalf("view of %d, through(%d) = %+v, want %+v", tv.n, at, got, want)
			}
			to := at + rng.Int64N(500)
			var got []entry
			tv.v.each(at, to, func(e entry) { got = append(got, e) })
			var want []entry
			for _, e := range es {
				if e.offset > at && e.offset <= to {
					want = append(want, e)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("view of %d, each(%d, %d): %d entries, want %d", tv.n, at, to, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("view of %d, each(%d, %d)[%d] = %+v, want %+v", tv.n, at, to, i, got[i], want[i])
				}
			}
		}
	}
}

func sliceThrough(es []entry, offset int64) entry {
	found := entry{offset: -1}
	for _, e := range es {
		if e.offset <= offset {
			found = e
		}
	}
	return found
}

// TestEntryLogBytesPerMessage: a sensor's messages (a few offsets apart,
// small deltas) take a few bytes each.
func TestEntryLogBytesPerMessage(t *testing.T) {
	var log entryLog
	e := entry{}
	const n = 100_000
	for i := range n {
		e.offset = int64(i) * 5
		e.records++
		e.hoursCents += 3
		e.kmCents += 12
		log.add(e)
	}
	bytes := 0
	for _, b := range log.blocks {
		bytes += len(b.deltas) + 80 // the block's own fields, rounded up
	}
	if per := float64(bytes) / n; per > 5 {
		t.Errorf("%.1f bytes a message, want at most 5", per)
	} else {
		t.Logf("%.2f bytes a message", per)
	}
}
