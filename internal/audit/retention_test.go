package audit

import (
	"slices"
	"testing"
)

// A log start that moves past what the reader read: the records read stay
// (their counts and usage), the offsets between are skipped, and the
// partition is caught up at its log start; reading on past the start
// records the gap once.
func TestLedgerLogStartMovedPastTheReader(t *testing.T) {
	l := NewLedger()
	l.Track(0)
	l.Track(1)
	for i := range int64(10) {
		l.Add(0, i, []byte("s1"), encode(t, "s1", 1000+i*1000, float64(i)/1000, float64(i)/1000))
	}
	l.SetHighWatermark(0, 10)
	l.SetHighWatermark(1, 0)
	l.SetLogStart(0, 5) // deleted after they were read: nothing skipped
	before := l.Snapshot()
	if !before.CaughtUp() || len(before.Skipped()) != 0 || before.Valid != 10 {
		t.Fatalf("read then deleted: caught up %v skipped %v valid %d", before.CaughtUp(), before.Skipped(), before.Valid)
	}
	u, _ := before.ExpectedUsage("s1", 0, -1)

	l.SetLogStart(0, 15) // 10..14 deleted before the reader got them
	l.SetHighWatermark(0, 15)
	gone := l.Snapshot()
	want := []OffsetRange{{Partition: 0, First: 10, Last: 14}}
	if !gone.CaughtUp() || !slices.Equal(gone.Skipped(), want) || gone.Partitions[0].Through() != 15 {
		t.Fatalf("deleted unread: caught up %v skipped %v through %d", gone.CaughtUp(), gone.Skipped(), gone.Partitions[0].Through())
	}
	if u2, _ := gone.ExpectedUsage("s1", 0, -1); u2 != u || gone.Valid != 10 {
		t.Fatalf("the records read were lost: usage %+v → %+v, valid %d", u, u2, gone.Valid)
	}
	if !gone.hasRead(0, 12) || gone.hasRead(0, 15) {
		t.Fatal("hasRead: a skipped offset is done with, the next one is not")
	}

	l.Add(0, 15, []byte("s1"), encode(t, "s1", 16000, 0.016, 0.016))
	l.SetHighWatermark(0, 16)
	on := l.Snapshot()
	if !on.CaughtUp() || !slices.Equal(on.Skipped(), want) || on.Valid != 11 {
		t.Fatalf("read on: caught up %v skipped %v valid %d", on.CaughtUp(), on.Skipped(), on.Valid)
	}
	if !slices.Equal(gone.Skipped(), want) {
		t.Fatalf("an older snapshot changed: %v", gone.Skipped())
	}
	// The log start of a partition the reader does not read is not taken.
	l.SetLogStart(7, 3)
	if n := len(l.Snapshot().Partitions); n != 2 {
		t.Fatalf("%d partitions", n)
	}
}
