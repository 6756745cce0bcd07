package audit

import (
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// TestInferPlaces: records written in the order a consumer reads, with a
// replay after a crash, a skipped message and a stale delta, are placed
// on the messages they come from.
func TestInferPlaces(t *testing.T) {
	var msgs []MessageDelta
	for i := range 20 {
		msgs = append(msgs, MessageDelta{Position: store.Position{Partition: 1, Offset: int64(10 + 3*i)},
			HoursCents: int64(10 + i), KmCents: int64(20 + 2*i)})
	}
	rec := func(i int) store.Totals {
		return store.Totals{HoursCents: msgs[i].HoursCents, KmCents: msgs[i].KmCents}
	}
	var recs []store.Totals
	var want []int
	add := func(from, to int) {
		for i := from; i <= to; i++ {
			recs, want = append(recs, rec(i)), append(want, i)
		}
	}
	add(2, 9)                                                                              // started at latest: message 1 was its reference
	add(6, 9)                                                                              // crashed, read again from its committed offset
	add(10, 12)                                                                            //
	add(14, 15)                                                                            // 13 skipped: never recorded
	recs, want = append(recs, store.Totals{HoursCents: 999, KmCents: 1}), append(want, 16) // stale: stands for 16
	add(17, 19)
	if got := InferPlaces(msgs, recs); !slices.Equal(got, want) {
		t.Fatalf("places %v\nwant   %v", got, want)
	}
	if got := InferPlaces(nil, recs[:2]); !slices.Equal(got, []int{-1, -1}) {
		t.Fatalf("no messages: %v", got)
	}
}
