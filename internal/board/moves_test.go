package board

import (
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// The layouts of three sensors before and after the topic grows: s1 moves
// from p2 to the new p3, s2 from p1 to p0, s3 stays in p1.
func threeRows(at0 float64) Partitions {
	one := []int32{0}
	return Partitions{At: at(at0), Topic: "sensor-data", Rows: []PartitionMeta{
		meta(0, 0, one, one), meta(1, 0, one, one, "s2", "s3"), meta(2, 0, one, one, "s1")}}
}

func fourRows(at0 float64) Partitions {
	one := []int32{0}
	return Partitions{At: at(at0), Topic: "sensor-data", Rows: []PartitionMeta{
		meta(0, 0, one, one, "s2"), meta(1, 0, one, one, "s3"), meta(2, 0, one, one), meta(3, 0, one, one, "s1")}}
}

var planned = []PlannedMove{{Sensor: "s1", From: 2, To: 3}, {Sensor: "s2", From: 1, To: 0}}

// grownBoard: consumer-current ran before the topic grew from 3 to 4
// partitions at 10 s; consumer-usage starts after it.
func grownBoard() *Board {
	b := New([]string{Producer, Current, Usage}, Config{Topic: "sensor-data"})
	b.Apply(ProcStarted{Name: Current, PID: 1, At: at(1)})
	b.Apply(threeRows(2))
	b.Apply(Offsets{At: at(2), HighWatermarks: map[int32]int64{0: 0, 1: 40, 2: 20}})
	b.Apply(TruthSnapshot{At: at(2), Sensors: []Truth{{SensorID: "s1", Partitions: []int32{2}, Valid: 20},
		{SensorID: "s2", Partitions: []int32{1}, Valid: 20}, {SensorID: "s3", Partitions: []int32{1}, Valid: 20}}})
	b.Apply(PartitionsAdded{At: at(10), Topic: "sensor-data", From: 3, To: 4, Moves: planned, Sensors: 3})
	return b
}

// The board times each party's first use of the new partition from the
// lab's growth, says which keys move before any moved, names the moves
// the audit reads with their offsets, and a moved key is not scattered.
func TestGrowthTimedAndKeysMoved(t *testing.T) {
	b := grownBoard()
	if !hasEvent(b, "", "the topic grew from 3 to 4 partitions: CRC-32 of the key mod 4 sends 2 of 3 sensors elsewhere") ||
		!hasEvent(b, "", "keys moving: s1 p2→p3 · s2 p1→p0") {
		t.Fatalf("growth events: %v", b.Events())
	}
	b.Apply(fourRows(10.4))
	if k := b.Partitions().Keys; len(k.Scattered) != 0 || !slices.Equal(k.Moving, []string{"s1", "s2"}) {
		t.Fatalf("before the audit read them: %+v", k)
	}
	b.Apply(Offsets{At: at(10.5), HighWatermarks: map[int32]int64{0: 0, 1: 40, 2: 20, 3: 0}})
	b.Apply(ProcStatus{Name: Current, At: at(10.9), Event: status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2, 3}}})
	b.Apply(Offsets{At: at(11), HighWatermarks: map[int32]int64{0: 1, 1: 41, 2: 20, 3: 1}})
	b.Apply(ProcStarted{Name: Usage, PID: 2, At: at(12)})
	b.Apply(ProcStatus{Name: Usage, At: at(12.5), Event: status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2, 3}}})
	moves := []KeyMove{{Sensor: "s1", From: 2, To: 3, LastOffset: 19, FirstOffset: 0}, {Sensor: "s2", From: 1, To: 0, LastOffset: 38, FirstOffset: 0}}
	b.Apply(TruthSnapshot{At: at(11.5), Moves: moves, AuditThrough: map[int32]int64{0: 1, 1: 41, 2: 20, 3: 1},
		Sensors: []Truth{{SensorID: "s1", Partitions: []int32{2, 3}, Valid: 21}, {SensorID: "s2", Partitions: []int32{0, 1}, Valid: 21},
			{SensorID: "s3", Partitions: []int32{1}, Valid: 21}}})
	for _, want := range []struct{ proc, text string }{
		{Producer, "writes to new partition p3 1.0 s after it was added"},
		{Current, "assigned new partition [3] 0.9 s after it was added"},
		{"", "the audit reads p3 1.5 s after it was added"},
		{"", "keys moved (audit): s1 p2→p3 from offset 0 · s2 p1→p0 from offset 0"},
	} {
		if !hasEvent(b, want.proc, want.text) {
			t.Errorf("no %q event of %q: %v", want.text, want.proc, b.Events())
		}
	}
	if hasEvent(b, Usage, "after it was added") {
		t.Error("consumer-usage started after the growth: its assignment is not a reaction to it")
	}
	g := b.Growth()
	if g == nil || g.ProducerAt != at(11) || g.Assigned[Current] != at(10.9) || g.AuditAt != at(11.5) || len(g.Planned) != 2 {
		t.Fatalf("growth %+v", g)
	}
	v := b.Partitions()
	if len(v.Keys.Scattered) != 0 || len(v.Keys.Moving) != 0 || !slices.Equal(v.Keys.Moved, moves) {
		t.Fatalf("keys %+v", v.Keys)
	}
	r := b.Report()
	if len(r.MovedKeys) != 2 || r.MovedKeys[0] != (ReportMovedKey{Sensor: "s1", From: 2, To: 3, FirstOffset: 0}) {
		t.Fatalf("moved_keys %+v", r.MovedKeys)
	}
	// A sensor in two partitions without a move the audit vouches for
	// (its partitions written at once, or not the pair it hashes to) is
	// scattered.
	b.Apply(TruthSnapshot{At: at(12), Moves: moves[:1], AuditThrough: map[int32]int64{0: 1, 1: 41, 2: 20, 3: 1},
		Sensors: []Truth{{SensorID: "s1", Partitions: []int32{2, 3}, Valid: 21}, {SensorID: "s2", Partitions: []int32{0, 1}, Valid: 21},
			{SensorID: "s3", Partitions: []int32{1, 2}, Valid: 21}}})
	if k := b.Partitions().Keys; !slices.Equal(k.Scattered, []string{"s2 in [0 1], computed 0", "s3 in [1 2], computed 1"}) {
		t.Fatalf("scattered %+v", k.Scattered)
	}
}

// Partitions added by another client: the metadata alone says which keys
// move, from the partitioner's placements before and after.
func TestGrowthSeenInTheMetadata(t *testing.T) {
	b := New([]string{Producer, Current}, Config{Topic: "sensor-data"})
	b.Apply(threeRows(1))
	b.Apply(fourRows(2))
	g := b.Growth()
	if g == nil || g.From != 3 || g.To != 4 || g.At != at(2) || !slices.Equal(g.Planned, planned) {
		t.Fatalf("growth %+v", g)
	}
	if !hasEvent(b, "", "sends 2 of 3 sensors elsewhere") {
		t.Fatalf("events %v", b.Events())
	}
}

// recreate-topic: the old topic's log, moves and growth are gone, and a
// poll asked before the recreation (answered late) does not bring them back.
func TestTopicRecreatedForgetsTheOldTopic(t *testing.T) {
	b := grownBoard()
	b.Apply(fourRows(10.4))
	b.Apply(TruthSnapshot{At: at(11.5), Moves: []KeyMove{{Sensor: "s1", From: 2, To: 3}}})
	b.Apply(TopicRecreated{At: at(20), Topic: "sensor-data", Partitions: 3})
	if !hasEvent(b, "", "topic sensor-data recreated with 3 partitions") {
		t.Fatalf("events %v", b.Events())
	}
	b.Apply(Offsets{At: at(19.9), HighWatermarks: map[int32]int64{0: 5, 1: 41, 2: 20, 3: 9}})
	b.Apply(fourRows(19.8))
	b.Apply(TruthSnapshot{At: at(19.9), Moves: []KeyMove{{Sensor: "s1", From: 2, To: 3}}})
	if hw, _ := b.HighWatermarks(); len(hw) != 0 || b.Growth() != nil || len(b.Report().MovedKeys) != 0 || b.Partitions().Seen {
		t.Fatalf("after the recreation: hw %v growth %+v moves %v", hw, b.Growth(), b.Report().MovedKeys)
	}
	b.Apply(threeRows(20.5))
	b.Apply(Offsets{At: at(20.5), HighWatermarks: map[int32]int64{0: 0, 1: 1, 2: 1}})
	if v := b.Partitions(); len(v.Rows) != 3 || v.Growth != nil || len(b.Report().MovedKeys) != 0 {
		t.Fatalf("the new topic: %+v", v)
	}
}
