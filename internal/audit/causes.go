package audit

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/kafka-recovery-lab/krl/internal/store"
)

// The causes of a drift: per message of a sensor's window, what its usage
// records add up to against what the topic yields for it. A sensor's
// causes sum to its drift exactly (recorded − expected of the same cut),
// because the records are exactly the ones the cut's totals fold (seqs
// 1..Records) and the expected usage is the sum of the window's messages.

// CauseKind says why a message's recorded usage differs from the topic's.
type CauseKind string

const (
	// CountedAgain: the message has two or more usage records: it was
	// delivered again (after a crash, a restart or a reassignment) and its
	// delta saved once more.
	CountedAgain CauseKind = "counted-again"
	// StaleReading: one record whose delta is not the topic's: it was taken
	// from a reading other than the message's predecessor (a previous
	// reading kept across a reassignment, a checkpoint behind its records
	// in the non-atomic window, or a replayed older message).
	StaleReading CauseKind = "stale-reading"
	// NeverRecorded: the topic yields a delta for the message and no record
	// has it (skipped: its offset committed past it, or a crash between
	// checkpoint and record).
	NeverRecorded CauseKind = "never-recorded"
)

// Cause is one message whose recorded usage differs from the topic's.
type Cause struct {
	Kind      CauseKind
	Partition int32
	Offset    int64
	// Records is how many usage records the message has; Writer wrote the
	// latest of them ("" when none, or written by a version that kept no
	// writer), from its reading of BaseTimestamp (epoch ms, 0 unknown).
	Records       int
	Writer        string
	BaseTimestamp int64
	Recorded      store.Totals
	Expected      store.Totals
}

// Drift is the cause's share of its sensor's drift: recorded − expected.
func (c Cause) Drift() (hoursCents, kmCents int64) {
	return c.Recorded.HoursCents - c.Expected.HoursCents, c.Recorded.KmCents - c.Expected.KmCents
}

func (c *Cause) classify() {
	switch {
	case c.Records == 0:
		c.Kind = NeverRecorded
	case c.Records > 1:
		c.Kind = CountedAgain
	default:
		c.Kind = StaleReading
	}
}

// Attribution keeps, across cuts, every sensor's causes, and reads only
// what is new: the records after the last one it read, the messages after
// the last one it compared. Pure: the lab reads the records it asks for
// (Need) and hands them to Apply. Not safe for concurrent use.
type Attribution struct {
	resets  int
	sensors map[string]*sensorCauses
}

type sensorCauses struct {
	first store.Position
	// seen: records 1..seen are accounted for; through: per partition,
	// the messages of the window through this offset are compared (see
	// throughOf for a partition not compared yet).
	seen     int64
	through  map[int32]int64
	recorded store.Totals
	expected store.Totals
	causes   map[store.Position]*Cause
	// order is the partitions in the key's order as last read (one, but
	// for a key that moved): causes are listed in it.
	order []int32
	// listed is causes in order as last handed out, nil when a cause
	// changed since: a cut without news costs no copy.
	listed []Cause
}

func newSensorCauses(first store.Position) *sensorCauses {
	return &sensorCauses{first: first, through: map[int32]int64{}, causes: map[store.Position]*Cause{}}
}

// NewAttribution returns an attribution with nothing read.
func NewAttribution() *Attribution {
	return &Attribution{sensors: map[string]*sensorCauses{}}
}

// Reset forgets everything (the store's records were dropped).
func (a *Attribution) Reset() { a.sensors = map[string]*sensorCauses{} }

// Need returns the records the next Apply of this cut needs: per sensor,
// records after from[id] through upTo[id] (seqs). A sensor whose records
// and expected usage grew alike since its last cut (the same hours, km and
// number of deltas) needs none: every message since is taken as recorded
// once, as the topic yields it. So records are read when a drift changes,
// not at every poll (on the embedded store any read of them is a scan of
// the collection); what this cannot see is a loss and a double count of
// exactly the same delta between two polls.
func (a *Attribution) Need(t Truth, cut map[string]Cut) (from, upTo map[string]int64) {
	a.forgetStale(t, cut)
	from, upTo = map[string]int64{}, map[string]int64{}
	for id, c := range cut {
		if c.State != Expected || !c.HasFirst || c.Records == 0 {
			continue
		}
		var seen int64
		var recorded, expected store.Totals
		if s := a.sensors[id]; s != nil {
			seen, recorded, expected = s.seen, s.recorded, s.expected
		}
		if c.Records == seen || grewAlike(c.Totals, recorded, c.Expected, expected) {
			continue
		}
		from[id], upTo[id] = seen, c.Records
	}
	return from, upTo
}

// grewAlike: recorded grew from r0 to r as expected grew from e0 to e.
func grewAlike(r, r0, e, e0 store.Totals) bool {
	return r.HoursCents-r0.HoursCents == e.HoursCents-e0.HoursCents &&
		r.KmCents-r0.KmCents == e.KmCents-e0.KmCents &&
		r.Records-r0.Records == e.Records-e0.Records
}

// forgetStale drops what no longer describes the topic or the store: every
// sensor after a partition's log restarted, a sensor whose first
// checkpoint moved or whose records went back (a reset).
func (a *Attribution) forgetStale(t Truth, cut map[string]Cut) {
	if t.Resets != a.resets {
		a.resets = t.Resets
		a.Reset()
	}
	for id, s := range a.sensors {
		c, ok := cut[id]
		if !ok || c.Records < s.seen || (c.HasFirst && c.First != s.first) {
			delete(a.sensors, id)
		}
	}
}

// Apply advances every sensor of the cut to it, with recs the records Need
// asked for (keyed by sensor, in seq order), and returns each sensor's
// causes ordered by offset (the same slice while they do not change: read
// only); bad lists the sensors whose causes could not be made to add up to
// their drift (records missing from recs): their state is dropped, and a
// Need after Apply asks for all their records.
func (a *Attribution) Apply(t Truth, cut map[string]Cut, from map[string]int64, recs map[string][]store.SensorRecord) (causes map[string][]Cause, bad []string) {
	causes = map[string][]Cause{}
	for id, c := range cut {
		if c.State != Expected || !c.HasFirst {
			continue
		}
		s := a.sensors[id]
		if s == nil || s.first != c.First {
			s = newSensorCauses(c.First)
			a.sensors[id] = s
		}
		ch, _ := t.chain(id)
		s.order = s.order[:0]
		for _, part := range ch {
			s.order = append(s.order, part.partition)
		}
		if _, asked := from[id]; asked {
			if !s.apply(ch, c, recs[id]) {
				delete(a.sensors, id)
				bad = append(bad, id)
				continue
			}
		} else {
			// No records read: the window grew as the topic yields it.
			for _, end := range reach(c.Covered) {
				s.through[end.Partition] = max(s.throughOf(ch, end.Partition), end.Offset)
			}
			s.seen = max(s.seen, c.Records)
		}
		s.recorded, s.expected = c.Totals, c.Expected
		if !s.addsUp() {
			delete(a.sensors, id)
			bad = append(bad, id)
			continue
		}
		if len(s.causes) > 0 {
			causes[id] = s.list()
		}
	}
	slices.Sort(bad)
	return causes, bad
}

// reach is, per partition the records come from, the furthest of them.
func reach(c store.Covered) []store.Position {
	if len(c.Furthest) == c.Partitions && c.Partitions > 0 {
		return c.Furthest
	}
	return []store.Position{c.Through} // a summary kept before Furthest: one partition
}

// throughOf is how far the messages of partition are compared: as far as
// a cut took them, else to the first checkpoint in its partition, all of
// them in a partition the key left before it (they stand for nothing), and
// none in a later one.
func (s *sensorCauses) throughOf(ch []chainPart, partition int32) int64 {
	if v, ok := s.through[partition]; ok {
		return v
	}
	if partition == s.first.Partition {
		return s.first.Offset
	}
	if i, first := index(ch, partition), index(ch, s.first.Partition); i >= 0 && i < first {
		return math.MaxInt64
	}
	return -1
}

// apply folds the records after s.seen and compares the messages after
// s.through, partition by partition along the key's chain ch; false when
// recs are not exactly the records asked for.
func (s *sensorCauses) apply(ch []chainPart, c Cut, recs []store.SensorRecord) bool {
	if int64(len(recs)) != c.Records-s.seen {
		return false
	}
	ends := reach(c.Covered)
	later := map[store.Position][]store.SensorRecord{}
	for i, r := range recs {
		if r.Seq != s.seen+int64(i)+1 || !slices.ContainsFunc(ends, func(p store.Position) bool { return p.Partition == r.Partition }) {
			return false
		}
		if r.Offset <= s.throughOf(ch, r.Partition) {
			s.addRecord(ch, r)
		} else {
			at := store.Position{Partition: r.Partition, Offset: r.Offset}
			later[at] = append(later[at], r)
		}
	}
	for _, end := range ends {
		after := s.throughOf(ch, end.Partition)
		if i := index(ch, end.Partition); i >= 0 && after < end.Offset {
			ch[i].eachDelta(after, end.Offset, func(offset int64, exp store.Totals) {
				at := store.Position{Partition: end.Partition, Offset: offset}
				cause := &Cause{Partition: at.Partition, Offset: offset, Expected: exp}
				for _, r := range later[at] {
					cause.add(r)
				}
				delete(later, at)
				s.keep(cause)
			})
		}
		s.through[end.Partition] = max(after, end.Offset)
	}
	for at, rs := range later { // records of no valid message of the sensor
		cause := &Cause{Partition: at.Partition, Offset: at.Offset}
		for _, r := range rs {
			cause.add(r)
		}
		s.keep(cause)
	}
	s.seen = c.Records
	return true
}

// inWindow reports whether the message at is after the first checkpoint in
// the key's order (its usage is the sensor's to record).
func (s *sensorCauses) inWindow(ch []chainPart, at store.Position) bool {
	i, first := index(ch, at.Partition), index(ch, s.first.Partition)
	if i < 0 || first < 0 {
		return false
	}
	return i > first || (i == first && at.Offset > s.first.Offset)
}

// addRecord adds a record of an already compared message: one without a
// cause was recorded exactly as the topic yields it.
func (s *sensorCauses) addRecord(ch []chainPart, r store.SensorRecord) {
	at := store.Position{Partition: r.Partition, Offset: r.Offset}
	cause := s.causes[at]
	if cause == nil {
		cause = &Cause{Partition: r.Partition, Offset: r.Offset}
		if s.inWindow(ch, at) {
			cause.Expected = ch[index(ch, at.Partition)].deltaAt(at.Offset)
		}
		cause.Recorded = cause.Expected
		cause.Records = int(cause.Expected.Records)
	}
	cause.add(r)
	s.keep(cause)
}

func (c *Cause) add(r store.SensorRecord) {
	c.Records++
	c.Recorded.HoursCents += r.HoursCents
	c.Recorded.KmCents += r.KmCents
	c.Recorded.Records++
	c.Writer, c.BaseTimestamp = r.Writer, r.BaseTimestamp
}

// keep stores cause if it differs from the topic, else clears its offset.
func (s *sensorCauses) keep(c *Cause) {
	s.listed = nil
	at := store.Position{Partition: c.Partition, Offset: c.Offset}
	if c.Recorded.HoursCents == c.Expected.HoursCents && c.Recorded.KmCents == c.Expected.KmCents {
		delete(s.causes, at)
		return
	}
	c.classify()
	s.causes[at] = c
}

func (s *sensorCauses) addsUp() bool {
	var h, k int64
	for _, c := range s.causes {
		dh, dk := c.Drift()
		h, k = h+dh, k+dk
	}
	return h == s.recorded.HoursCents-s.expected.HoursCents && k == s.recorded.KmCents-s.expected.KmCents
}

// list is the causes in the key's order (partition by partition as the
// key moved, by offset in each); callers must not modify it.
func (s *sensorCauses) list() []Cause {
	if s.listed != nil {
		return s.listed
	}
	rank := func(p int32) int {
		if i := slices.Index(s.order, p); i >= 0 {
			return i
		}
		return len(s.order) + int(p)
	}
	out := make([]Cause, 0, len(s.causes))
	for _, at := range slices.SortedFunc(maps.Keys(s.causes), func(a, b store.Position) int {
		return cmp.Or(cmp.Compare(rank(a.Partition), rank(b.Partition)), cmp.Compare(a.Offset, b.Offset))
	}) {
		out = append(out, *s.causes[at])
	}
	s.listed = out
	return out
}
