package board

import (
	"maps"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// The accessors below are what guided scenarios measure with.

func TestReadFromTellsWhereAnIncarnationStarted(t *testing.T) {
	b := newBoard(ProcStarted{Name: Usage, PID: 10, At: at(0)})
	if _, ok := b.Process(Usage).ReadFrom(); ok {
		t.Fatal("ReadFrom known before any report")
	}
	// Assigned at committed offsets 40/30/20, then 7 messages processed and
	// 1 invalid one skipped: positions moved by 8 in total.
	b.Apply(ev(Usage, 1, status.Event{Type: status.Progress, Processed: 7, Invalid: 1, Positions: []status.Position{
		{Partition: 0, Offset: 43, HighWatermark: 50}, {Partition: 1, Offset: 33, HighWatermark: 40}, {Partition: 2, Offset: 22, HighWatermark: 30},
	}}))
	p := b.Process(Usage)
	if from, ok := p.ReadFrom(); !ok || from != 90 {
		t.Fatalf("ReadFrom = %d, %v; want 90 (40+30+20)", from, ok)
	}
	if p.Processed != 7 || p.Invalid != 1 || len(p.Positions) != 3 || !p.StartedAt.Equal(at(0)) {
		t.Fatalf("incarnation fields: %+v", p)
	}

	// A position not known yet (-1 before the first fetch): no answer.
	b.Apply(ev(Usage, 2, status.Event{Type: status.Progress, Positions: []status.Position{{Partition: 0, Offset: -1}}}))
	if _, ok := b.Process(Usage).ReadFrom(); ok {
		t.Fatal("ReadFrom known with an unknown position")
	}

	// A new incarnation starts its own count.
	b.Apply(ProcExited{Name: Usage, PID: 10, At: at(3), Signal: "SIGKILL"})
	if p := b.Process(Usage); !p.StartedAt.IsZero() {
		t.Fatalf("a dead process has a start time: %v", p.StartedAt)
	}
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(4)})
	if p := b.Process(Usage); p.Processed != 0 || len(p.Positions) != 0 || !p.StartedAt.Equal(at(4)) {
		t.Fatalf("restart kept the old incarnation's report: %+v", p)
	}
}

func TestCaughtUpStatsAndCrashPointHit(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Current, PID: 20, At: at(0)},
		ev(Current, 1.5, status.Event{Type: status.CaughtUp, Processed: 1234, Millis: 420}),
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 2, status.Event{Type: status.CrashPoint, Point: "after-delta", Partition: 1, Offset: 42}),
		ProcExited{Name: Usage, PID: 10, At: at(2.01), Signal: "SIGKILL"},
	)
	c := b.Process(Current)
	if !c.Current.CaughtUp || c.Current.CaughtUpMessages != 1234 || c.Current.CaughtUpMillis != 420 {
		t.Fatalf("caught-up stats: %+v", c)
	}
	hit := b.Process(Usage).LastCrashPoint
	if hit == nil || hit.Point != "after-delta" || hit.Partition != 1 || hit.Offset != 42 || !hit.At.Equal(at(2)) {
		t.Fatalf("crash point hit: %+v", hit)
	}
	// It stays after a restart: a scenario reads it once the process is back.
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(3)})
	if b.Process(Usage).LastCrashPoint == nil {
		t.Fatal("crash point hit forgotten on restart")
	}
}

func TestCommittedAccessor(t *testing.T) {
	b := newBoard(ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0, status.Event{Type: status.Started, GroupID: "demo-usage"}))
	if offs, _, _ := b.Committed(); offs != nil {
		t.Fatalf("offsets before any poll: %v", offs)
	}
	b.Apply(Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 5, 1: 6}})
	offs, group, current := b.Committed()
	if !maps.Equal(offs, map[int32]int64{0: 5, 1: 6}) || group != "demo-usage" || !current {
		t.Fatalf("Committed = %v %q %v", offs, group, current)
	}
	offs[0] = 99 // a copy: the board is not changed through it
	if again, _, _ := b.Committed(); again[0] != 5 {
		t.Fatal("Committed returned the board's own map")
	}
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(2)})
	b.Apply(ev(Usage, 2, status.Event{Type: status.Started, GroupID: "demo-usage-earliest-1a2b3c4d"}))
	if _, _, current := b.Committed(); current {
		t.Fatal("commits of the old group count for the new one")
	}
}

func TestUsageCaughtUpAlone(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Producer, PID: 9, At: at(0)},
		ProcStarted{Name: Usage, PID: 10, At: at(0)},
		ev(Usage, 0, status.Event{Type: status.Started, GroupID: "demo-usage"}),
		Offsets{At: at(1), HighWatermarks: map[int32]int64{0: 10, 1: 10}},
		Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 10, 1: 10}},
	)
	// consumer-current never started: CaughtUp says no, UsageCaughtUp yes.
	if b.CaughtUp() {
		t.Fatal("CaughtUp without consumer-current")
	}
	if !b.UsageCaughtUp() {
		t.Fatal("UsageCaughtUp with commits at the watermarks")
	}
	// A restart: caught up again only once the commits reach a watermark
	// sampled after it.
	b.Apply(ProcStarted{Name: Usage, PID: 11, At: at(3)})
	b.Apply(Offsets{At: at(4), HighWatermarks: map[int32]int64{0: 30, 1: 30}})
	if b.UsageCaughtUp() {
		t.Fatal("UsageCaughtUp 40 messages behind after a restart")
	}
	b.Apply(Committed{At: at(5), Group: "demo-usage", Offsets: map[int32]int64{0: 30, 1: 30}})
	if !b.UsageCaughtUp() {
		t.Fatal("not UsageCaughtUp once the commits reached the watermarks")
	}
}
