package board

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// RetentionSet: the lab gave the topic a short retention (--retention,
// the T key): records older than Retention are deleted, and the log start
// of each partition moves forward as they are.
type RetentionSet struct {
	At        time.Time
	Topic     string
	Retention time.Duration
}

func (RetentionSet) input()       {}
func (RetentionSet) Urgent() bool { return false }

// retentionState is what the board keeps of the topic's retention and of
// each partition's log start.
type retentionState struct {
	// setting: the short retention the lab set (0: the topic's own).
	setting time.Duration
	since   time.Time
	// logStart: each partition's latest log start read; nil before the
	// first read (and after the topic is recreated).
	logStart map[int32]int64
	// deleted: the ranges the log starts moved over in this run, oldest
	// first.
	deleted []Deletion
	// auditSkipped: the audit's latest ranges deleted before it read
	// them; skipSaid: the ranges the timeline named, by partition and
	// first offset.
	auditSkipped []OffsetRange
	skipSaid     map[OffsetRange]bool
	// run: the deletions the latest timeline entry says, by partition, and
	// that entry's Seq: deletions come at every retention check, and while
	// nothing else happens they fold into that one entry.
	run    map[int32]OffsetRange
	runSeq uint64
	// forgotSaid: the forgotten sensors the timeline named, by their last
	// message.
	forgotSaid map[Forgotten]bool
}

// Deletion is a range of a partition's offsets that left the log: the log
// start moved from First to Last+1 between two reads.
type Deletion struct {
	Partition   int32
	First, Last int64
	// At: when the read that saw the new log start was asked for.
	At time.Time
	// ByRetention: the lab had set a short retention (else the topic's
	// own retention, or a deletion of records, moved it).
	ByRetention bool
	// Committed: consumer-usage's group's committed offset of the
	// partition as last read before (-1 unknown): at or before First, it
	// had not read the range.
	Committed int64
}

// Count is how many offsets the range holds.
func (d Deletion) Count() int64 { return d.Last - d.First + 1 }

func (b *Board) retentionSet(v RetentionSet) {
	if b.ret.setting == v.Retention {
		return
	}
	b.ret.setting, b.ret.since = v.Retention, v.At
	b.event(v.At, "", LevelWarn, fmt.Sprintf("%s: retention %s: older records are deleted, the log starts move forward",
		v.Topic, v.Retention))
}

// logStarts takes a read of the partitions' log starts (with the watermarks
// of the same read): a start that moved forward is an event naming the
// deleted offsets. The first read is a baseline; a start that went back
// is a new log (the topic recreated), a baseline again.
func (b *Board) logStarts(at time.Time, starts map[int32]int64) {
	if starts == nil {
		return
	}
	prev := b.ret.logStart
	b.ret.logStart = maps.Clone(starts)
	if prev == nil {
		return
	}
	var now []Deletion
	for _, p := range slices.Sorted(maps.Keys(starts)) {
		was, ok := prev[p]
		start := starts[p]
		if !ok || start <= was {
			continue
		}
		d := Deletion{Partition: p, First: was, Last: start - 1, At: at, ByRetention: b.ret.setting > 0, Committed: -1}
		if c, ok := b.committed[p]; ok && b.commitRead.seen && c >= 0 {
			d.Committed = c
		}
		now = append(now, d)
	}
	if len(now) == 0 {
		return
	}
	b.ret.deleted = append(b.ret.deleted, now...)
	if n := len(b.events); n == 0 || b.events[n-1].Seq != b.ret.runSeq || b.ret.run == nil {
		b.ret.run = map[int32]OffsetRange{}
		b.ret.runSeq = 0
	}
	for _, d := range now {
		r, ok := b.ret.run[d.Partition]
		if !ok {
			r = OffsetRange{Partition: d.Partition, First: d.First}
		}
		r.Last = d.Last
		b.ret.run[d.Partition] = r
	}
	text := deletionText(b.ret.run, now[0].ByRetention)
	if b.ret.runSeq != 0 {
		last := &b.events[len(b.events)-1]
		if at.After(last.At) {
			last.At = at
		}
		last.Text = text
		return
	}
	b.event(at, "", LevelWarn, text)
	if n := len(b.events); n > 0 && b.events[n-1].Text == text {
		b.ret.runSeq = b.events[n-1].Seq
	}
}

// deletionText is the timeline's line for the ranges deleted:
// "p2: offsets 0–1,199 deleted by retention", the partitions in order.
func deletionText(run map[int32]OffsetRange, byRetention bool) string {
	var what []string
	for _, p := range slices.Sorted(maps.Keys(run)) {
		r := run[p]
		if r.First == r.Last {
			what = append(what, fmt.Sprintf("p%d: offset %s", p, Count(r.First)))
		} else {
			what = append(what, fmt.Sprintf("p%d: offsets %s–%s", p, Count(r.First), Count(r.Last)))
		}
	}
	by := "deleted (the log start moved: the topic's own retention, or a deletion of records)"
	if byRetention {
		by = "deleted by retention"
	}
	return strings.Join(what, ", ") + " " + by
}

// Retention is the short retention the lab set (0: none) and since when.
func (b *Board) Retention() (time.Duration, time.Time) { return b.ret.setting, b.ret.since }

// LogStarts is each partition's latest log start read (nil before the
// first read).
func (b *Board) LogStarts() map[int32]int64 { return maps.Clone(b.ret.logStart) }

// Deletions are the ranges that left the log in this run, oldest first.
func (b *Board) Deletions() []Deletion { return slices.Clone(b.ret.deleted) }

// auditSkipped takes the audit's ranges deleted before it read them: a new
// one is an event, as what the audit's counts and expected usage lack.
func (b *Board) auditSkipped(at time.Time, skipped []OffsetRange) {
	b.ret.auditSkipped = slices.Clone(skipped)
	if b.ret.skipSaid == nil {
		b.ret.skipSaid = map[OffsetRange]bool{}
	}
	for _, r := range skipped {
		k := OffsetRange{Partition: r.Partition, First: r.First}
		if b.ret.skipSaid[k] {
			continue
		}
		b.ret.skipSaid[k] = true
		what := fmt.Sprintf("offsets %s–%s", Count(r.First), Count(r.Last))
		if r.First == r.Last {
			what = "offset " + Count(r.First)
		}
		b.event(at, "", LevelBad, fmt.Sprintf("audit: p%d %s were deleted before it read them: its counts and expected usage lack %s",
			r.Partition, what, Plural(r.Count(), "message")))
	}
}

// auditSkippedCount is how many messages the audit could not read.
func (r retentionState) auditSkippedCount() int64 {
	var n int64
	for _, s := range r.auditSkipped {
		n += s.Count()
	}
	return n
}

// AuditSkipped are the audit's latest ranges deleted before it read them.
func (b *Board) AuditSkipped() []OffsetRange { return slices.Clone(b.ret.auditSkipped) }

// retentionCauses names the never-recorded messages that retention deleted
// before consumer-usage read them: its committed offset was at or before
// them when they were deleted, so it could never read them (its next
// fetch is OFFSET_OUT_OF_RANGE) and their usage is never counted. The
// audit read them before, so its expected usage still has them. causes is
// not modified.
func (b *Board) retentionCauses(causes []Cause) []Cause {
	if len(b.ret.deleted) == 0 {
		return causes
	}
	var out []Cause
	for i, c := range causes {
		if c.Kind != CauseNeverRecorded || !b.deletedUnread(c.Partition, c.Offset) {
			continue
		}
		if out == nil {
			out = slices.Clone(causes)
		}
		out[i].Kind = CauseDeletedUnread
	}
	if out == nil {
		return causes
	}
	return out
}

// deletedUnread: offset of partition was deleted while consumer-usage's
// committed offset was at or before it.
func (b *Board) deletedUnread(partition int32, offset int64) bool {
	for _, d := range b.ret.deleted {
		if d.Partition == partition && d.First <= offset && offset <= d.Last && d.Committed >= 0 && d.Committed <= offset {
			return true
		}
	}
	return false
}

// DeletedPastCommit: by the latest reads, a partition's log start is past
// consumer-usage's group's committed offset there: retention deleted
// messages it had not read.
func (b *Board) DeletedPastCommit() bool {
	if !b.commitRead.seen || b.commitRead.err != nil {
		return false
	}
	for p, start := range b.ret.logStart {
		if c, ok := b.committed[p]; ok && c >= 0 && start > c {
			return true
		}
	}
	return false
}

// Forgotten is a sensor consumer-current does not hold because retention
// deleted its last message before consumer-current replayed the topic.
type Forgotten struct {
	SensorID  string
	Partition int32
	Offset    int64
	// DeletedAt: when the read that saw it deleted was asked for (zero:
	// deleted before this run).
	DeletedAt time.Time
}

// Words: "sensor-07: its last message p1@118 was deleted by retention at
// 12:03:10".
func (f Forgotten) Words() string {
	s := fmt.Sprintf("%s: its last message p%d@%d was deleted by retention", f.SensorID, f.Partition, f.Offset)
	if !f.DeletedAt.IsZero() {
		s += " at " + f.DeletedAt.Local().Format("15:04:05")
	}
	return s
}

// Short: "sensor-07 forgotten: p1@118 deleted 12:03:10", for a narrow
// panel.
func (f Forgotten) Short() string {
	s := fmt.Sprintf("%s forgotten: p%d@%d deleted", f.SensorID, f.Partition, f.Offset)
	if !f.DeletedAt.IsZero() {
		s += " " + f.DeletedAt.Local().Format("15:04:05")
	}
	return s
}

// forgotten lists, by sensor, the sensors the audit read and
// consumer-current's state lacks whose last message is below its
// partition's log start.
func (b *Board) forgotten() []Forgotten {
	held := map[string]bool{}
	for _, s := range b.sensors {
		held[s.SensorID] = true
	}
	var out []Forgotten
	for _, id := range slices.Sorted(maps.Keys(b.truth)) {
		t := b.truth[id]
		if held[id] || t.Last == nil {
			continue
		}
		start, ok := b.ret.logStart[t.Last.Partition]
		if !ok || t.Last.Offset >= start {
			continue
		}
		f := Forgotten{SensorID: id, Partition: t.Last.Partition, Offset: t.Last.Offset}
		for _, d := range b.ret.deleted {
			if d.Partition == f.Partition && d.First <= f.Offset && f.Offset <= d.Last {
				f.DeletedAt = d.At
			}
		}
		out = append(out, f)
	}
	return out
}

// noteForgotten names on the timeline, once, each sensor a caught-up
// consumer-current lacks because retention deleted its last message.
func (b *Board) noteForgotten(at time.Time) {
	for _, f := range b.forgotten() {
		k := Forgotten{SensorID: f.SensorID, Partition: f.Partition, Offset: f.Offset}
		if b.ret.forgotSaid[k] {
			continue
		}
		if b.ret.forgotSaid == nil {
			b.ret.forgotSaid = map[Forgotten]bool{}
		}
		b.ret.forgotSaid[k] = true
		b.event(at, Current, LevelBad, "cannot rebuild "+f.Words())
	}
}

// LastDeleted: by the latest reads, the last message of sensor the audit
// read is below its partition's log start.
func (b *Board) LastDeleted(sensor string) bool {
	t, ok := b.truth[sensor]
	if !ok || t.Last == nil {
		return false
	}
	start, ok := b.ret.logStart[t.Last.Partition]
	return ok && t.Last.Offset < start
}
