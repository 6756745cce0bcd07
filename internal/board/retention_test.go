package board

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func watermarks(sec float64, starts, ends map[int32]int64) Offsets {
	return Offsets{At: at(sec), LogStarts: starts, HighWatermarks: ends}
}

// A log start that moves forward is an event naming the deleted offsets,
// by retention once the lab set one; the first read is a baseline, and a
// start that did not move says nothing.
func TestLogStartMovedIsDeletedByRetention(t *testing.T) {
	b := New([]string{Producer, Current}, Config{Topic: "sensor-data"})
	b.Apply(threeRows(1))
	b.Apply(watermarks(1, map[int32]int64{0: 0, 1: 0, 2: 100}, map[int32]int64{0: 500, 1: 800, 2: 900}))
	if len(b.Deletions()) != 0 {
		t.Fatalf("the first read is a baseline: %v", b.Deletions())
	}
	b.Apply(RetentionSet{At: at(2), Topic: "sensor-data", Retention: 20 * time.Second})
	if !hasEvent(b, "", "sensor-data: retention 20s: older records") {
		t.Fatalf("events %v", b.Events())
	}
	b.Apply(watermarks(3, map[int32]int64{0: 0, 1: 0, 2: 1200}, map[int32]int64{0: 510, 1: 810, 2: 1400}))
	b.Apply(watermarks(4, map[int32]int64{0: 1, 1: 0, 2: 1200}, map[int32]int64{0: 520, 1: 820, 2: 1410}))
	want := []Deletion{
		{Partition: 2, First: 100, Last: 1199, At: at(3), ByRetention: true, Committed: -1},
		{Partition: 0, First: 0, Last: 0, At: at(4), ByRetention: true, Committed: -1},
	}
	if got := b.Deletions(); !slices.Equal(got[:2], want) {
		t.Fatalf("deletions %+v, want %+v", got, want)
	}
	// Deletions one read after another fold into one entry.
	if n := len(b.Events()); n != 2 || !hasEvent(b, "", "p0: offset 0, p2: offsets 100–1,199 deleted by retention") {
		t.Fatalf("events %v", b.Events())
	}
	// Another entry in between: the next deletions are an entry of their own.
	b.Apply(Action{At: at(4.5), Text: "something else"})
	b.Apply(watermarks(5, map[int32]int64{0: 3, 1: 0, 2: 1200}, map[int32]int64{0: 530, 1: 830, 2: 1420}))
	if n := len(b.Events()); n != 4 || b.Events()[3].Text != "p0: offsets 1–2 deleted by retention" {
		t.Fatalf("events %v", b.Events())
	}
	v := b.Partitions()
	if v.Retention != 20*time.Second || !v.Trimmed || v.Rows[0].LogStart != 3 || v.Rows[1].LogStart != 0 || v.Rows[2].LogStart != 1200 || v.Rows[2].HighWatermark != 1420 {
		t.Fatalf("view %+v", v)
	}
	r := b.Report()
	if r.Retention.RetentionMs != 20000 || len(r.Retention.Deleted) != 3 || r.Retention.Deleted[0] != (ReportRange{Partition: 2, First: 100, Last: 1199}) ||
		len(r.Retention.AuditSkipped) != 0 || *r.Partitions[2].LogStart != 1200 {
		t.Fatalf("report %+v", r.Retention)
	}
}

// Without a retention of the lab's, a moved log start is still said, by
// what moves it; a recreated topic starts a new baseline (its start goes
// back to 0).
func TestLogStartMovedWithoutRetention(t *testing.T) {
	b := New([]string{Producer, Current}, Config{Topic: "sensor-data"})
	b.Apply(watermarks(1, map[int32]int64{0: 0}, map[int32]int64{0: 50}))
	b.Apply(watermarks(2, map[int32]int64{0: 10}, map[int32]int64{0: 60}))
	if !hasEvent(b, "", "p0: offsets 0–9 deleted (the log start moved") {
		t.Fatalf("events %v", b.Events())
	}
	b.Apply(TopicRecreated{At: at(3), Topic: "sensor-data", Partitions: 1})
	b.Apply(watermarks(4, map[int32]int64{0: 0}, map[int32]int64{0: 5}))
	b.Apply(watermarks(5, map[int32]int64{0: 0}, map[int32]int64{0: 9}))
	if got := b.Deletions(); len(got) != 1 {
		t.Fatalf("deletions %+v", got)
	}
}

// Offsets deleted before the audit read them are an event once per range,
// however the range grows while the audit waits at the log start, and the
// usage panel counts them.
func TestAuditSkippedIsSaidOnce(t *testing.T) {
	b := New([]string{Producer, Current}, Config{Topic: "sensor-data"})
	b.Apply(TruthSnapshot{At: at(1), AuditOffset: 10, Skipped: []OffsetRange{{Partition: 1, First: 10, Last: 14}}})
	b.Apply(TruthSnapshot{At: at(2), AuditOffset: 10, Skipped: []OffsetRange{{Partition: 1, First: 10, Last: 19}}})
	n := 0
	for _, e := range b.Events() {
		if strings.Contains(e.Text, "audit: p1 offsets 10–14 were deleted before it read them: its counts and expected usage lack 5 messages") {
			n++
		} else if strings.Contains(e.Text, "deleted before it read them") {
			t.Fatalf("another event: %q", e.Text)
		}
	}
	if n != 1 {
		t.Fatalf("said %d times: %v", n, b.Events())
	}
	if v := b.Usage(); v.AuditSkipped != 10 {
		t.Fatalf("usage view skipped %d", v.AuditSkipped)
	}
}

// A never-recorded message that retention deleted while consumer-usage's
// committed offset was at or before it is named as deleted unread; one
// deleted after consumer-usage committed past it, or never deleted, keeps
// its kind.
func TestNeverRecordedDeletedByRetention(t *testing.T) {
	b := newBoard(ProcStarted{Name: Query, PID: 12, At: at(0)})
	b.Apply(RetentionSet{At: at(1), Topic: "sensor-data", Retention: 20 * time.Second})
	b.Apply(Committed{At: at(1), Group: "demo-usage", Offsets: map[int32]int64{0: 40, 1: 90}})
	b.Apply(watermarks(1, map[int32]int64{0: 0, 1: 0}, map[int32]int64{0: 100, 1: 100}))
	if b.DeletedPastCommit() {
		t.Fatal("nothing deleted, yet past the commit")
	}
	b.Apply(watermarks(2, map[int32]int64{0: 60, 1: 60}, map[int32]int64{0: 110, 1: 110}))
	if !b.DeletedPastCommit() {
		t.Fatal("p0's log start 60 is past the commit 40")
	}
	never := func(p int32, off int64) Cause {
		return Cause{Kind: CauseNeverRecorded, Partition: p, Offset: off, ExpectedHoursCents: 10, ExpectedKmCents: 20}
	}
	in := []Cause{never(0, 30), never(0, 45), never(0, 59), never(0, 70), never(1, 50)}
	b.Apply(causesInput(3, in...))
	var kinds []string
	for _, c := range b.Usage().Rows[0].Causes {
		kinds = append(kinds, c.Kind)
	}
	want := []string{CauseNeverRecorded, CauseDeletedUnread, CauseDeletedUnread, CauseNeverRecorded, CauseNeverRecorded}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if in[1].Kind != CauseNeverRecorded {
		t.Fatal("the input was modified")
	}
	if !hasEvent(b, "", "2 messages of p0 (offsets 45–59) deleted-by-retention") {
		t.Fatalf("events %v", b.Events())
	}
	g := b.Why("s1").Groups
	i := slices.IndexFunc(g, func(g CauseGroup) bool { return g.Kind == CauseDeletedUnread })
	if i < 0 || !strings.Contains(g[i].What(), "never counted: deleted by retention before consumer-usage read them") {
		t.Fatalf("groups %+v", g)
	}
}

// A sensor the audit read, whose last message retention deleted, and that
// a caught-up consumer-current does not hold, is forgotten: the sensors
// panel, the timeline (once) and the report name it with its last message
// and when it was deleted. A sensor whose last message is still in the log
// is not.
func TestForgottenSensor(t *testing.T) {
	b := newBoard(ProcStarted{Name: Current, PID: 11, At: at(0)})
	b.Apply(RetentionSet{At: at(1), Topic: "sensor-data", Retention: 20 * time.Second})
	b.Apply(watermarks(1, map[int32]int64{0: 0, 1: 0}, map[int32]int64{0: 40, 1: 60}))
	b.Apply(watermarks(25, map[int32]int64{0: 0, 1: 30}, map[int32]int64{0: 40, 1: 60}))
	last := func(id string, p int32, off int64) Truth {
		return Truth{SensorID: id, Partitions: []int32{p}, Valid: 1, Last: &SensorState{SensorID: id, Timestamp: 1000 + off, Partition: p, Offset: off}}
	}
	b.Apply(TruthSnapshot{At: at(26), AuditOffset: 100, Sensors: []Truth{last("sensor-01", 1, 59), last("sensor-07", 1, 12), last("sensor-09", 0, 3)}})
	for _, sec := range []float64{27, 28} {
		b.Apply(SensorsSnapshot{At: at(sec), CaughtUp: true, Sensors: []SensorState{*last("sensor-01", 1, 59).Last}})
		b.Apply(Tick{Now: at(sec)})
	}
	if !b.LastDeleted("sensor-07") || b.LastDeleted("sensor-01") || b.LastDeleted("sensor-99") {
		t.Fatal("LastDeleted: sensor-07's last message is below the log start, sensor-01's is not, sensor-99 has none")
	}
	v := b.Sensors()
	want := []Forgotten{{SensorID: "sensor-07", Partition: 1, Offset: 12, DeletedAt: at(25)}}
	if !slices.Equal(v.Forgotten, want) {
		t.Fatalf("forgotten %+v (status %v)", v.Forgotten, v.Status)
	}
	if n := countEvents(b, "cannot rebuild sensor-07: its last message p1@12 was deleted by retention at "); n != 1 {
		t.Fatalf("said %d times: %v", n, b.Events())
	}
	r := b.Report().Retention.Forgotten
	if len(r) != 1 || r[0].Sensor != "sensor-07" || r[0].Offset != 12 || r[0].DeletedAt == nil || !r[0].DeletedAt.Equal(at(25)) {
		t.Fatalf("report %+v", r)
	}
}
