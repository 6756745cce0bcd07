package board

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// consumer-usage's group had commits, consumer-usage stopped, and the
// broker has none for the group any more: the timeline says they expired;
// its next start at the end names what it jumped over, and the drift's
// never-recorded messages there are named for it.
func TestExpiredCommitsNamed(t *testing.T) {
	b := New(all(), Config{Brokers: "127.0.0.1:9092", Mongo: "mongodb://127.0.0.1:27017", OffsetsRetention: 5 * time.Second})
	commits := func(sec float64, offsets map[int32]int64) Committed {
		return Committed{At: at(sec), Group: "demo-usage", Offsets: offsets}
	}
	none := map[int32]int64{0: -1, 1: -1}
	for _, in := range []Input{
		ProcStarted{Name: Usage, PID: 7, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, GroupID: "demo-usage", Mode: "naive", Reset: "latest"}),
		commits(1, map[int32]int64{0: 40, 1: 50}),
		// Gone while it runs: not an expiry (the group has a member).
		commits(2, none),
		commits(3, map[int32]int64{0: 40, 1: 52}),
		ProcExited{Name: Usage, PID: 7, At: at(4), Deliberate: true},
		commits(5, map[int32]int64{0: 40, 1: 52}),
	} {
		b.Apply(in)
	}
	if _, ok := b.ExpiredCommits(); ok || countEvents(b, "commits expired") != 0 {
		t.Fatalf("an expiry before the commits were gone: %v", b.Events())
	}
	b.Apply(commits(16, map[int32]int64{}))
	b.Apply(commits(17, none))
	e, ok := b.ExpiredCommits()
	if !ok || e.Offsets[0] != 40 || e.Offsets[1] != 52 || !e.At.Equal(at(16)) {
		t.Fatalf("expiry %+v %v", e, ok)
	}
	if n := countEvents(b, "commits expired: its group was empty longer than the offsets retention (5s)"); n != 1 {
		t.Fatalf("%d timeline lines for the expiry: %v", n, b.Events())
	}
	b.Apply(ProcStarted{Name: Usage, PID: 8, At: at(20)})
	b.Apply(ev(Usage, 20.1, status.Event{Type: status.Started, GroupID: "demo-usage", Mode: "naive", Reset: "latest"}))
	b.Apply(ev(Usage, 20.5, status.Event{Type: status.Assigned, Partitions: []int32{0, 1},
		Positions: []status.Position{{Partition: 0, Offset: 40}, {Partition: 1, Offset: 70}}}))
	if e, _ := b.ExpiredCommits(); len(e.Skipped) != 1 || e.Skipped[0] != (SkippedRange{Partition: 1, From: 52, To: 70}) {
		t.Fatalf("skipped %+v", e.Skipped)
	}
	if n := countEvents(b, "skipped 18 messages, never counted: no commits (expired), latest started it at the end: p1 52–69"); n != 1 {
		t.Fatalf("%d timeline lines for the skip: %v", n, b.Events())
	}
	skipped := Cause{Kind: CauseNeverRecorded, Partition: 1, Offset: 60, ExpectedHoursCents: 10, ExpectedKmCents: 20}
	other := Cause{Kind: CauseNeverRecorded, Partition: 1, Offset: 80, ExpectedHoursCents: 10, ExpectedKmCents: 20}
	b.Apply(ProcStarted{Name: Query, PID: 12, At: at(21)})
	b.Apply(causesInput(22, skipped, other))
	groups := b.Why("").Groups
	if len(groups) != 2 || groups[0].Skipped == groups[1].Skipped {
		t.Fatalf("groups %+v", groups)
	}
	for _, g := range groups {
		words := g.Words()
		expired := g.Skipped == ExpiredWhy
		if expired != strings.Contains(words, ExpiredWhy) || expired != (g.FirstOffset == 60) {
			t.Errorf("offset %d: %q", g.FirstOffset, words)
		}
	}
	if n := countEvents(b, "(offset 60) "+ExpiredWhy); n != 1 {
		t.Fatalf("the timeline does not name the skipped message: %v", b.Events())
	}
}

// Commits that went with a recreated topic did not expire.
func TestRecreatedTopicIsNoExpiry(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 7, At: at(0)},
		ev(Usage, 0.1, status.Event{Type: status.Started, GroupID: "demo-usage"}),
		Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 40}},
		ProcExited{Name: Usage, PID: 7, At: at(2), Deliberate: true},
		TopicRecreated{At: at(3), Topic: "sensor-data", Partitions: 3},
		Committed{At: at(4), Group: "demo-usage", Offsets: map[int32]int64{0: -1}},
	)
	if e, ok := b.ExpiredCommits(); ok || countEvents(b, "commits expired") != 0 {
		t.Fatalf("an expiry after the topic was recreated: %+v %v", e, b.Events())
	}
}

// An offset reset consumer-usage reports (its position moved past offsets
// it never read, from before the log start) is said once on the timeline,
// and the never-recorded messages in it are named for it, apart from the
// others.
func TestResetSkipNamed(t *testing.T) {
	b := New([]string{Producer, Usage, Query}, Config{})
	b.Apply(ProcStarted{Name: Usage, PID: 7, At: at(0)})
	b.Apply(Offsets{At: at(1), LogStarts: map[int32]int64{2: 40}, HighWatermarks: map[int32]int64{2: 100}})
	b.Apply(ev(Usage, 2, status.Event{Type: status.Skipped, Partition: 2, Offset: 30, Count: 50}))
	if n := countEvents(b, "skipped 50 messages of p2 (offsets 30–79), never counted: its position 30 was before the log start 40 (OFFSET_OUT_OF_RANGE), auto.offset.reset moved it on"); n != 1 {
		t.Fatalf("%d timeline lines for the reset: %v", n, b.Events())
	}
	inside := Cause{Kind: CauseNeverRecorded, Partition: 2, Offset: 60, ExpectedHoursCents: 10, ExpectedKmCents: 20}
	after := Cause{Kind: CauseNeverRecorded, Partition: 2, Offset: 80, ExpectedHoursCents: 10, ExpectedKmCents: 20}
	b.Apply(ProcStarted{Name: Query, PID: 12, At: at(3)})
	b.Apply(causesInput(4, inside, after))
	groups := b.Why("").Groups
	if len(groups) != 2 {
		t.Fatalf("groups %+v", groups)
	}
	for _, g := range groups {
		if reset := g.Skipped == ResetWhy; reset != (g.FirstOffset == 60) || reset != strings.Contains(g.Words(), ResetWhy) {
			t.Errorf("offset %d: skipped %q: %q", g.FirstOffset, g.Skipped, g.Words())
		}
	}
}
