// Package audit is the dashboard's independent ground truth, read from the
// topic itself rather than from what the consumers say: per sensor the last
// valid message, how many records were valid or invalid, and the usage the
// seed's delta rule yields over any window of the log. The dashboard puts
// this beside the consumers' answers; the difference is the lesson.
//
// Ledger is the pure bookkeeping (no I/O); Reader feeds a Ledger from the
// topic and hands out consistent snapshots.
package audit

import (
	"slices"
	"sort"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Located is a message with where it was read.
type Located struct {
	Message   telemetry.Message
	Partition int32
	Offset    int64
}

// entry is one valid message of a series with running totals through it:
// the usage of a window is then a difference of two entries found by
// search on offset. The log keeps them compact (entries.go).
type entry struct {
	offset     int64
	hoursCents int64 // cumulative delta hours, in hundredths
	kmCents    int64 // cumulative delta km, in hundredths
	records    int64 // cumulative number of deltas the rule records
}

// seriesKey names one sensor's messages in one partition. Keys map to one
// partition, so a sensor normally has one series; keeping partitions apart
// keeps "previous message" well defined (there is no order across
// partitions) and lets a partition whose log restarted be dropped alone.
type seriesKey struct {
	sensor    string
	partition int32
}

// series is the ordered summary of one sensor in one partition. entries is
// append-only, so a snapshot keeps a view of it while the ledger goes on
// appending.
type series struct {
	entries entryLog
	// first and last valid message; meaningful when len(entries) > 0
	first, last Located
	invalid     int64
	backwards   int64 // invalid because a timestamp or an odometer went back (subset of invalid)
	// disordered counts messages whose timestamp is not after the previous
	// valid one's: a duplicate, or an older reading after a newer one (a
	// reordering: invalid as backwards, and counted here too).
	disordered int64
	lastError  string
	errorAt    int64 // offset of the last invalid record
	// contents: every record of the series with a timestamp, valid or
	// not, for finding an acknowledged record by content (contents.go).
	contents contentLog
}

// partProgress is how far the ledger has read one partition.
type partProgress struct {
	next          int64 // offset after the last record read; 0 before any
	highWatermark int64 // last log-end offset the client learned; -1 unknown
	// logStart: the latest log start learned (0 until one is): the offsets
	// below it are gone from the log, read or not.
	logStart int64
	// skipped: the ranges of offsets the reader never got, because they
	// were deleted (retention) before it read them, in offset order
	// (append-only: a snapshot keeps a prefix).
	skipped      []OffsetRange
	unattributed int64 // invalid records with no key to name a sensor by
	// invalidAt lists the partition's invalid records in offset order
	// (append-only: a snapshot keeps a prefix).
	invalidAt []InvalidRecord
}

// InvalidRecord is a record the audit skipped as invalid, and why.
type InvalidRecord struct {
	Partition int32
	Offset    int64
	Reason    string
}

// Ledger accumulates the truth of a topic from its records, read in offset
// order per partition. Not safe for concurrent use: Reader guards it.
type Ledger struct {
	series map[seriesKey]*series
	parts  map[int32]*partProgress
	resets int
	valid  *telemetry.Validator
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{series: map[seriesKey]*series{}, parts: map[int32]*partProgress{}, valid: telemetry.NewValidator()}
}

func (l *Ledger) part(p int32) *partProgress {
	pp := l.parts[p]
	if pp == nil {
		pp = &partProgress{highWatermark: -1}
		l.parts[p] = pp
	}
	return pp
}

// Track makes partition p known before any record of it arrives, so an
// empty partition still shows in Partitions (and counts for CaughtUp).
func (l *Ledger) Track(p int32) { l.part(p) }

// OffsetRange is the offsets First..Last of a partition.
type OffsetRange struct {
	Partition   int32
	First, Last int64
}

// Count is how many offsets the range holds.
func (r OffsetRange) Count() int64 { return r.Last - r.First + 1 }

// SetLogStart records the log start of p as the broker answered it: the
// offsets below it are deleted. Records read before stay in the ledger;
// offsets between what was read and the log start can no longer be read,
// and are the partition's skipped ones (Truth.Skipped) until the reader
// reads on past them.
func (l *Ledger) SetLogStart(p int32, start int64) {
	if pp := l.parts[p]; pp != nil { // a partition the reader reads
		pp.logStart = max(pp.logStart, start)
	}
}

// SetHighWatermark records the log-end offset of p as the client knows it.
func (l *Ledger) SetHighWatermark(p int32, hwm int64) {
	if hwm >= 0 {
		l.part(p).highWatermark = hwm
	}
}

// Add applies the record at partition/offset. Records of a partition must
// come in increasing offset order; an offset below the partition's read
// position means its log restarted (a fresh broker data dir), and what was
// learned from the old log of that partition is dropped, because it no
// longer describes the topic.
//
// Records are judged by the product's one rule (telemetry.Validator, as
// consumer-current judges them; consumer-usage applies the same
// telemetry.Check): an invalid record is counted (under its key; without a
// key, under the partition) and never becomes the reference for the next
// delta or the next backwards check.
func (l *Ledger) Add(partition int32, offset int64, key, value []byte) {
	pp := l.part(partition)
	if offset < pp.next {
		l.dropPartition(partition)
		pp = l.part(partition)
	}
	if offset > pp.next {
		// Offsets of this topic are dense (no transactions, no
		// compaction): a gap is offsets deleted before the reader got
		// there (its client starts again at the log start).
		pp.skipped = append(pp.skipped, OffsetRange{Partition: partition, First: pp.next, Last: offset - 1})
	}
	pp.next = offset + 1

	msg, verdict, err := l.valid.Judge(partition, offset, key, value)
	if verdict == telemetry.Replay {
		return // cannot happen: offsets only grow once the partition was dropped
	}
	if err != nil {
		pp.invalidAt = append(pp.invalidAt, InvalidRecord{Partition: partition, Offset: offset, Reason: err.Error()})
		if len(key) == 0 {
			pp.unattributed++
			return
		}
		s := l.seriesOf(string(key), partition)
		s.invalid++
		if kind := telemetry.KindOf(err); kind == telemetry.Backwards || kind == telemetry.Jump {
			if kind == telemetry.Backwards {
				s.backwards++
			}
			// A reading all the same (out of order, or out of line): it is
			// in the topic.
			if m, derr := telemetry.Decode(key, value); derr == nil {
				s.contents.add(content{offset: offset, timestamp: m.Timestamp})
				if s.entries.view().len() > 0 && m.Timestamp <= s.last.Message.Timestamp {
					// An older reading after a newer one: the key's order
					// broke, whatever else the rule calls it.
					s.disordered++
				}
			}
		}
		s.lastError, s.errorAt = err.Error(), offset
		return
	}
	s := l.seriesOf(msg.SensorID, partition)
	var prev entry
	if s.entries.view().len() == 0 {
		s.first = Located{Message: msg, Partition: partition, Offset: offset}
	}
	if v := s.entries.view(); v.len() > 0 {
		prev = v.last()
		if msg.Timestamp <= s.last.Message.Timestamp {
			s.disordered++
		}
		if u, record := telemetry.Delta(s.last.Message, msg); record {
			prev.hoursCents += store.Cents(u.DeltaHours)
			prev.kmCents += store.Cents(u.DeltaKm)
			prev.records++
		}
	}
	prev.offset = offset
	s.entries.add(prev)
	s.contents.add(content{offset: offset, timestamp: msg.Timestamp})
	s.last = Located{Message: msg, Partition: partition, Offset: offset}
}

func (l *Ledger) seriesOf(sensor string, partition int32) *series {
	k := seriesKey{sensor, partition}
	s := l.series[k]
	if s == nil {
		s = &series{}
		l.series[k] = s
	}
	return s
}

func (l *Ledger) dropPartition(p int32) {
	for k := range l.series {
		if k.partition == p {
			delete(l.series, k)
		}
	}
	delete(l.parts, p)
	l.valid.Forget(p)
	l.resets++
}

// Truth is a consistent, immutable view of a Ledger at one moment. Its
// methods are safe for concurrent use and stay valid while the ledger moves on.
type Truth struct {
	// Sensors is sorted by SensorID. A key that only ever carried invalid
	// records appears too, with Valid 0.
	Sensors []SensorTruth
	// Valid and Invalid count the records read, topic-wide.
	Valid, Invalid int64
	// Unattributed counts invalid records without a key (part of Invalid).
	Unattributed int64
	// InvalidAt lists every invalid record read, by partition then offset.
	InvalidAt []InvalidRecord
	// Partitions is sorted by partition id.
	Partitions []PartitionProgress
	// Resets counts partitions whose log restarted under the reader.
	Resets int
	// At is when the snapshot was taken; Err is the reader's latest
	// connection problem ("" when fine). Both are filled by Reader.
	At  time.Time
	Err string

	series   map[seriesKey]entryView
	contents map[seriesKey]contentView
	ends     map[seriesKey]Series
}

// SensorTruth is what the topic says about one sensor.
type SensorTruth struct {
	SensorID string
	// Last is the sensor's last valid message; HasLast is false when it has
	// none. With records in several partitions (never, when keys decide the
	// partition) it is the one with the latest timestamp.
	Last    Located
	HasLast bool
	// Valid and Invalid count its records; Backwards is the part of Invalid
	// whose timestamp or odometer went below the previous valid record.
	Valid, Invalid, Backwards int64
	// LastError describes the latest invalid record, at LastErrorAt
	// (partition LastErrorPartition).
	LastError          string
	LastErrorPartition int32
	LastErrorAt        int64
	// Partitions is how many partitions carried the sensor (1 normally),
	// PartitionIDs which ones (sorted).
	Partitions   int
	PartitionIDs []int32
	// Disordered counts records whose timestamp is not after the previous
	// valid record of the sensor in its partition: a duplicate, or a
	// reordering (that record is also invalid, in Backwards); 0 when the
	// key's order held.
	Disordered int64
	// Series are its valid records partition by partition, in the key's
	// order (by their first record's timestamp); Chained: each ends before
	// the next begins, so the key was written to one partition at a time
	// (a key that moved when partitions were added). Moves are the steps
	// from one to the next, when Chained.
	Series  []Series
	Chained bool
	Moves   []Move
}

// PartitionProgress is how far the reader has got in one partition.
type PartitionProgress struct {
	Partition int32
	// Next is the offset after the last record read (0 before any).
	Next int64
	// HighWatermark is the log-end offset as the reader last learned it
	// from the broker, -1 before it knows.
	HighWatermark int64
	// LogStart is the log start as the reader last learned it (0 before).
	LogStart int64
	// Skipped are the ranges deleted before the reader read them, in
	// offset order, the last one up to LogStart when the reader is not
	// past it yet.
	Skipped []OffsetRange
}

// Through is the offset the reader is done with: after the last record
// read, or the log start when records up to it were deleted unread.
func (p PartitionProgress) Through() int64 { return max(p.Next, p.LogStart) }

// CaughtUp reports whether the reader has read up to the last high
// watermark it learned: a log whose start was deleted unread is caught up
// once nothing after the start is left to read.
func (p PartitionProgress) CaughtUp() bool {
	return p.HighWatermark >= 0 && p.Through() >= p.HighWatermark
}

// CaughtUp reports whether every known partition is caught up.
func (t Truth) CaughtUp() bool {
	if len(t.Partitions) == 0 {
		return false
	}
	for _, p := range t.Partitions {
		if !p.CaughtUp() {
			return false
		}
	}
	return true
}

// Read is the number of records read so far over all partitions.
func (t Truth) Read() int64 { return t.Valid + t.Invalid }

// Sensor returns one sensor's truth.
func (t Truth) Sensor(id string) (SensorTruth, bool) {
	i := sort.Search(len(t.Sensors), func(i int) bool { return t.Sensors[i].SensorID >= id })
	if i < len(t.Sensors) && t.Sensors[i].SensorID == id {
		return t.Sensors[i], true
	}
	return SensorTruth{}, false
}

// ExpectedUsage is the usage the seed's rule yields for sensor from the
// messages of partition after offset after, up to the end read so far:
// for each valid message M with offset > after, Delta(previous valid
// message, M) in exact hundredths, counting only deltas that are recorded.
// The previous valid message may lie at or before after (it is the
// reference the window starts from, as a checkpoint is). With after = -1
// the window is the whole log; the first message of a sensor has no
// predecessor and yields nothing, as consumer-usage's first message only
// checkpoints. ok is false when the audit has no valid message of the
// sensor in that partition. O(log n).
func (t Truth) ExpectedUsage(sensor string, partition int32, after int64) (usage store.Totals, ok bool) {
	return t.ExpectedUsageBetween(sensor, partition, after, -1)
}

// ExpectedUsageBetween is ExpectedUsage over the window (after, through];
// through < 0 means "to the end read so far". ExpectedOver (window.go)
// picks the window a consumer's recorded totals stand for.
func (t Truth) ExpectedUsageBetween(sensor string, partition int32, after, through int64) (usage store.Totals, ok bool) {
	es, ok := t.series[seriesKey{sensor, partition}]
	if !ok || es.len() == 0 {
		return store.Totals{}, false
	}
	end := es.last()
	if through >= 0 {
		end = es.through(through)
	}
	start := es.through(after)
	if end.offset < start.offset { // empty window (through <= after)
		return store.Totals{}, true
	}
	return store.Totals{
		HoursCents: end.hoursCents - start.hoursCents,
		KmCents:    end.kmCents - start.kmCents,
		Records:    end.records - start.records,
	}, true
}

// hasRead reports whether the audit is done with offset of partition: it
// read it, or it was deleted before the audit got there (Skipped).
func (t Truth) hasRead(partition int32, offset int64) bool {
	for _, p := range t.Partitions {
		if p.Partition == partition {
			return p.Through() > offset
		}
	}
	return false
}

// Snapshot returns the ledger's current truth. It copies O(sensors), not
// O(messages): the per-series entries are shared append-only prefixes.
func (l *Ledger) Snapshot() Truth {
	t := Truth{Resets: l.resets, series: make(map[seriesKey]entryView, len(l.series)),
		contents: make(map[seriesKey]contentView, len(l.series)), ends: make(map[seriesKey]Series, len(l.series))}
	bySensor := map[string]*SensorTruth{}
	for k, s := range l.series {
		t.series[k] = s.entries.view()
		t.contents[k] = s.contents.view()
		st := bySensor[k.sensor]
		if st == nil {
			st = &SensorTruth{SensorID: k.sensor}
			bySensor[k.sensor] = st
		}
		st.Partitions++
		st.PartitionIDs = append(st.PartitionIDs, k.partition)
		st.Disordered += s.disordered
		valid := int64(t.series[k].len())
		st.Valid += valid
		if valid > 0 {
			ends := Series{Partition: k.partition, First: s.first, Last: s.last, Valid: valid}
			t.ends[k] = ends
			st.Series = append(st.Series, ends)
		}
		st.Invalid += s.invalid
		st.Backwards += s.backwards
		if valid > 0 && (!st.HasLast || s.last.Message.Timestamp > st.Last.Message.Timestamp) {
			st.Last, st.HasLast = s.last, true
		}
		if s.lastError != "" && (st.LastError == "" || s.errorAt > st.LastErrorAt) {
			st.LastError, st.LastErrorPartition, st.LastErrorAt = s.lastError, k.partition, s.errorAt
		}
		t.Valid += valid
		t.Invalid += s.invalid
	}
	t.Sensors = make([]SensorTruth, 0, len(bySensor))
	for _, st := range bySensor {
		slices.Sort(st.PartitionIDs)
		st.chain()
		t.Sensors = append(t.Sensors, *st)
	}
	sort.Slice(t.Sensors, func(i, j int) bool { return t.Sensors[i].SensorID < t.Sensors[j].SensorID })
	for p, pp := range l.parts {
		t.Unattributed += pp.unattributed
		skipped := slices.Clip(pp.skipped)
		if pp.logStart > pp.next {
			skipped = append(skipped, OffsetRange{Partition: p, First: pp.next, Last: pp.logStart - 1})
		}
		t.Partitions = append(t.Partitions, PartitionProgress{Partition: p, Next: pp.next, HighWatermark: pp.highWatermark,
			LogStart: pp.logStart, Skipped: skipped})
		t.InvalidAt = append(t.InvalidAt, pp.invalidAt...)
	}
	t.Invalid += t.Unattributed
	sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].Partition < t.Partitions[j].Partition })
	sort.Slice(t.InvalidAt, func(i, j int) bool {
		a, b := t.InvalidAt[i], t.InvalidAt[j]
		return a.Partition < b.Partition || (a.Partition == b.Partition && a.Offset < b.Offset)
	})
	return t
}

// Skipped is every range deleted before the reader read it, by partition
// then offset: what the audit's counts and expected usage lack.
func (t Truth) Skipped() []OffsetRange {
	var out []OffsetRange
	for _, p := range t.Partitions {
		out = append(out, p.Skipped...)
	}
	return out
}
