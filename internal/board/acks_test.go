package board

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func lost(p int32, off int64, sensor string, ts int64) LostWrite {
	return LostWrite{Partition: p, Offset: off, Sensor: sensor, Timestamp: ts, Acks: "1"}
}

// TestAcksSettingAndSwitch: the setting the dashboard asks for, the one the
// running producer says it uses, and the timeline's words for both.
func TestAcksSettingAndSwitch(t *testing.T) {
	b := newBoard(ProcStarted{Name: Producer, PID: 7, At: at(0)},
		ev(Producer, 0.1, status.Event{Type: status.Started, PID: 7, Acks: "all"}))
	if v := b.Acks(); v.Setting != "all" || v.Running != "all" || b.Process(Producer).Producer.Acks != "all" {
		t.Fatalf("start: %+v", v)
	}
	b.Apply(AcksSetting{At: at(1), Acks: "1"})
	if !hasEvent(b, Producer, "from now on acks=1: the leader confirms a write alone") {
		t.Fatalf("no switch event: %q", lastEvent(b))
	}
	if v := b.Acks(); v.Setting != "1" || v.Running != "all" {
		t.Fatalf("asked, not switched yet: %+v", v)
	}
	b.Apply(ev(Producer, 1.5, status.Event{Type: status.AcksSet, Acks: "1", Count: 10, Millis: 496}))
	if !hasEvent(b, Producer, "acks=1 in force: 10 records flushed first, new producer in 496 ms") || b.Process(Producer).Producer.Acks != "1" {
		t.Fatalf("switched: %q, row %q", lastEvent(b), b.Process(Producer).Producer.Acks)
	}
	// A refused switch says so and keeps the setting the producer kept.
	b.Apply(AcksSetting{At: at(2), Acks: "all"})
	b.Apply(AcksSetting{At: at(2.1), Acks: "1", Err: errors.New("5 records still unacknowledged")})
	if !hasEvent(b, Producer, "acks switch failed: 5 records still unacknowledged; it keeps acks=1") || b.AcksSetting() != "1" {
		t.Fatalf("refused: %q, setting %q", lastEvent(b), b.AcksSetting())
	}
	// Down, the row says what it starts with.
	b.Apply(ProcExited{Name: Producer, PID: 7, At: at(3), Signal: "SIGKILL"})
	if v := b.Acks(); v.Running != "" || b.Process(Producer).Producer.Acks != "1" {
		t.Fatalf("down: %+v", v)
	}
}

// TestLostWritesOnTheTimeline: each lost write is named once, when the
// check first finds it, whatever partition it is in.
func TestLostWritesOnTheTimeline(t *testing.T) {
	b := newBoard()
	b.Apply(AckedCheck{At: at(1), Acknowledged: 100, Missing: []LostWrite{lost(2, 40, "sensor-08", 5000), lost(2, 41, "sensor-07", 5000)}})
	if !hasEvent(b, "", "2 acknowledged writes lost: p2 offsets 40–41 (acks=1), not in the topic") {
		t.Fatalf("first loss: %q", lastEvent(b))
	}
	// A loss in a lower partition found later sorts first: only it is new.
	b.Apply(AckedCheck{At: at(2), Acknowledged: 110, Missing: []LostWrite{lost(0, 7, "sensor-09", 6000), lost(2, 40, "sensor-08", 5000), lost(2, 41, "sensor-07", 5000)}})
	if got := lastEvent(b); !strings.Contains(got, "1 acknowledged write lost: p0 offset 7 (acks=1)") {
		t.Fatalf("second loss: %q", got)
	}
	n := countEvents(b, "lost:")
	b.Apply(AckedCheck{At: at(3), Acknowledged: 120, Missing: []LostWrite{lost(0, 7, "sensor-09", 6000), lost(2, 40, "sensor-08", 5000), lost(2, 41, "sensor-07", 5000)}})
	if countEvents(b, "lost:") != n {
		t.Fatal("the same losses named again")
	}
	// An unreadable log keeps the last good check and says why.
	b.Apply(AckedCheck{At: at(4), Err: errors.New("permission denied")})
	if v := b.Acks(); v.Acknowledged != 120 || len(v.Missing) != 3 || v.Err == nil {
		t.Fatalf("after an error: %+v", v)
	}
	if got := LostRanges([]LostWrite{lost(1, 5, "a", 1), lost(1, 3, "a", 1), lost(1, 4, "a", 1), lost(1, 9, "a", 1), lost(0, 1, "b", 1)}); got != "p0 offset 1 (acks=1); p1 offsets 3–5, 9 (acks=1)" {
		t.Fatalf("LostRanges = %q", got)
	}
}

// TestReportAcks: the report's acks is the contract: setting,
// acknowledged, missing with partition, offset, sensor and timestamp (an
// empty list, not null, when nothing is lost).
func TestReportAcks(t *testing.T) {
	b := newBoard()
	var r map[string]any
	raw, _ := json.Marshal(b.Report())
	_ = json.Unmarshal(raw, &r)
	if got, _ := json.Marshal(r["acks"]); string(got) != `{"acknowledged":0,"checked":0,"missing":[],"pending":0,"setting":"all","unchecked":0,"unchecked_spans":[],"unconfirmed":0}` {
		t.Fatalf("empty acks %s", got)
	}
	b.Apply(AcksSetting{At: at(1), Acks: "1"})
	b.Apply(AckedCheck{At: at(2), Acknowledged: 42, Missing: []LostWrite{lost(2, 40, "sensor-08", 5000)}})
	raw, _ = json.Marshal(b.Report())
	_ = json.Unmarshal(raw, &r)
	want := `{"acknowledged":42,"checked":42,"missing":[{"acks":"1","offset":40,"partition":2,"sensor":"sensor-08","timestamp":5000}],"pending":0,"setting":"1","unchecked":0,"unchecked_spans":[],"unconfirmed":0}`
	if got, _ := json.Marshal(r["acks"]); string(got) != want {
		t.Fatalf("acks %s, want %s", got, want)
	}
}

// TestLostWithAcksNone: records sent with acks=0 have no offset; a loss of
// them is named as sent with acks=0 and not in the topic, with their
// count per partition, on the timeline and in the report.
func TestLostWithAcksNone(t *testing.T) {
	none := func(p int32, sensor string, ts int64) LostWrite {
		return LostWrite{Partition: p, Offset: -1, Sensor: sensor, Timestamp: ts, Acks: "0"}
	}
	b := newBoard()
	b.Apply(AcksSetting{At: at(1), Acks: "0"})
	if !hasEvent(b, Producer, "from now on acks=0: fire and forget: the producer counts a record as sent once it is on the broker's connection") {
		t.Fatalf("no switch event: %q", lastEvent(b))
	}
	b.Apply(AckedCheck{At: at(2), Acknowledged: 120, Unconfirmed: 100, Pending: 4, PendingUnplaced: 3,
		Missing: []LostWrite{none(2, "sensor-08", 5000), none(2, "sensor-07", 5001), none(0, "sensor-09", 5002), lost(1, 12, "sensor-02", 4000)}})
	if !hasEvent(b, "", "3 records sent with acks=0 lost, 1 in p0, 2 in p2: not in the topic; the producer counted them as sent") {
		t.Fatalf("acks=0 loss: %q", lastEvent(b))
	}
	if !hasEvent(b, "", "1 acknowledged write lost: p1 offset 12 (acks=1), not in the topic") {
		t.Fatal("the acks=1 loss beside them is not named as acknowledged")
	}
	if got := LostRanges([]LostWrite{lost(2, 9, "a", 1), none(2, "b", 2), none(0, "c", 3)}); got != "p0 1 sent with acks=0; p2 1 sent with acks=0; p2 offset 9 (acks=1)" {
		t.Fatalf("LostRanges = %q", got)
	}
	var r map[string]any
	raw, _ := json.Marshal(b.Report())
	_ = json.Unmarshal(raw, &r)
	want := `{"acknowledged":120,"checked":120,"missing":[{"acks":"0","offset":-1,"partition":2,"sensor":"sensor-08","timestamp":5000},` +
		`{"acks":"0","offset":-1,"partition":2,"sensor":"sensor-07","timestamp":5001},{"acks":"0","offset":-1,"partition":0,"sensor":"sensor-09","timestamp":5002},` +
		`{"acks":"1","offset":12,"partition":1,"sensor":"sensor-02","timestamp":4000}],"pending":4,"setting":"0","unchecked":0,"unchecked_spans":[],"unconfirmed":100}`
	if got, _ := json.Marshal(r["acks"]); string(got) != want {
		t.Fatalf("acks %s, want %s", got, want)
	}
}

// TestBlockedCauseWithAcksOne: an ISR below min.insync.replicas does not
// refuse acks=1 writes, so the board does not blame it.
func TestBlockedCauseWithAcksOne(t *testing.T) {
	b := clusterBoard()
	b.Apply(ev(Producer, 0.1, status.Event{Type: status.Started, Acks: "1"}))
	b.Apply(Partitions{At: at(1), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{meta(0, 2, []int32{1, 2, 3}, []int32{1, 2, 3})}})
	b.Apply(Partitions{At: at(2), Topic: "sensor-data", MinISR: 2, Rows: []PartitionMeta{meta(0, 2, []int32{1, 2, 3}, []int32{2})}})
	if !hasEvent(b, "", "ISR [1 2 3] → [2] < min.insync.replicas 2: the producer's acks=1 writes are still taken") {
		t.Fatalf("ISR event: %q", lastEvent(b))
	}
	b.Apply(ev(Producer, 3, status.Event{Type: status.Blocked, Count: 5, Millis: 2500, Error: "Local: Broker transport failure"}))
	if got := b.Process(Producer).Producer.BlockedCause; got != "Local: Broker transport failure" {
		t.Fatalf("cause %q", got)
	}
}

// TestWaitingAndFrozenAt: the producer's progress says what waits
// unacknowledged; a freeze and a thaw are timed.
func TestWaitingAndFrozenAt(t *testing.T) {
	b := clusterBoard()
	b.Apply(ev(Producer, 1, status.Event{Type: status.Progress, Produced: 10, Count: 4, Millis: 1200}))
	if v := b.Acks(); v.Waiting != 4 || v.WaitingFor.Milliseconds() != 1200 || !v.WaitingAt.Equal(at(1)) {
		t.Fatalf("waiting %+v", v)
	}
	pid := b.Process("broker-2").PID
	b.Apply(ProcFrozen{Name: "broker-2", PID: pid, At: at(2), Frozen: true})
	b.Apply(ProcFrozen{Name: "broker-2", PID: pid, At: at(3.5), Frozen: false})
	if p := b.Process("broker-2"); !p.FrozenAt.Equal(at(2)) || !p.ThawedAt.Equal(at(3.5)) || p.Frozen {
		t.Fatalf("freeze times %+v", p)
	}
	v := AcksView{Latest: map[int32]AckedRecord{2: {Partition: 2, Offset: 9, Timestamp: at(2.5).UnixMilli()}}}
	if !v.AckedSince(2, at(2)) || v.AckedSince(2, at(3)) || v.AckedSince(0, at(0)) {
		t.Fatal("AckedSince")
	}
	// One round since the freeze may still reach the frozen followers; a
	// second has only the leader.
	if v.AckedInTwoRoundsSince(2, at(2)) {
		t.Fatal("AckedInTwoRoundsSince with one round since the freeze")
	}
	v.EarlierRound = map[int32]AckedRecord{2: {Partition: 2, Offset: 8, Timestamp: at(1.5).UnixMilli()}}
	if v.AckedInTwoRoundsSince(2, at(2)) {
		t.Fatal("AckedInTwoRoundsSince with the earlier round before the freeze")
	}
	v.EarlierRound[2] = AckedRecord{Partition: 2, Offset: 8, Timestamp: at(2.2).UnixMilli()}
	if !v.AckedInTwoRoundsSince(2, at(2)) || v.AckedInTwoRoundsSince(2, at(2.3)) {
		t.Fatal("AckedInTwoRoundsSince")
	}
}
