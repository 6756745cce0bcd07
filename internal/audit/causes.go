package audit

import (
	"maps"
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
	// seen: records 1..seen are accounted for; through: the messages of
	// the window through this offset are compared.
	seen     int64
	through  int64
	recorded store.Totals
	expected store.Totals
	causes   map[int64]*Cause // by offset, in first.Partition
	// listed is causes in offset order as last handed out, nil when a
	// cause changed since: a cut without news costs no copy.
	listed []Cause
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
			s = &sensorCauses{first: c.First, through: c.First.Offset, causes: map[int64]*Cause{}}
			a.sensors[id] = s
		}
		if _, asked := from[id]; asked {
			if !s.apply(t, id, c, recs[id]) {
				delete(a.sensors, id)
				bad = append(bad, id)
				continue
			}
		} else {
			// No records read: the window grew as the topic yields it.
			s.through = max(s.through, c.Through.Offset)
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

// apply folds the records after s.seen and compares the messages after
// s.through; false when recs are not exactly the records asked for.
func (s *sensorCauses) apply(t Truth, sensor string, c Cut, recs []store.SensorRecord) bool {
	if int64(len(recs)) != c.Records-s.seen {
		return false
	}
	part := s.first.Partition
	later := map[int64][]store.SensorRecord{}
	for i, r := range recs {
		if r.Seq != s.seen+int64(i)+1 || r.Partition != part {
			return false
		}
		if r.Offset <= s.through {
			s.addRecord(t, sensor, r)
		} else {
			later[r.Offset] = append(later[r.Offset], r)
		}
	}
	t.eachDelta(sensor, part, s.through, c.Through.Offset, func(offset int64, exp store.Totals) {
		cause := &Cause{Partition: part, Offset: offset, Expected: exp}
		for _, r := range later[offset] {
			cause.add(r)
		}
		delete(later, offset)
		s.keep(cause)
	})
	for offset, rs := range later { // records of no valid message of the sensor
		cause := &Cause{Partition: part, Offset: offset}
		for _, r := range rs {
			cause.add(r)
		}
		s.keep(cause)
	}
	s.seen = c.Records
	s.through = max(s.through, c.Through.Offset)
	return true
}

// addRecord adds a record of an already compared message: one without a
// cause was recorded exactly as the topic yields it.
func (s *sensorCauses) addRecord(t Truth, sensor string, r store.SensorRecord) {
	cause := s.causes[r.Offset]
	if cause == nil {
		cause = &Cause{Partition: r.Partition, Offset: r.Offset}
		if r.Offset > s.first.Offset {
			cause.Expected = t.deltaAt(sensor, r.Partition, r.Offset)
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
	if c.Recorded.HoursCents == c.Expected.HoursCents && c.Recorded.KmCents == c.Expected.KmCents {
		delete(s.causes, c.Offset)
		return
	}
	c.classify()
	s.causes[c.Offset] = c
}

func (s *sensorCauses) addsUp() bool {
	var h, k int64
	for _, c := range s.causes {
		dh, dk := c.Drift()
		h, k = h+dh, k+dk
	}
	return h == s.recorded.HoursCents-s.expected.HoursCents && k == s.recorded.KmCents-s.expected.KmCents
}

// list is the causes in offset order; callers must not modify it.
func (s *sensorCauses) list() []Cause {
	if s.listed != nil {
		return s.listed
	}
	out := make([]Cause, 0, len(s.causes))
	for _, o := range slices.Sorted(maps.Keys(s.causes)) {
		out = append(out, *s.causes[o])
	}
	s.listed = out
	return out
}

// eachDelta calls fn for every valid message of sensor in partition with
// an offset in (after, through], with the usage the seed's rule yields
// for it (zero when its delta is not recorded).
func (t Truth) eachDelta(sensor string, partition int32, after, through int64, fn func(offset int64, u store.Totals)) {
	es := t.series[seriesKey{sensor, partition}]
	prev := es.through(after)
	es.each(after, through, func(e entry) {
		fn(e.offset, store.Totals{HoursCents: e.hoursCents - prev.hoursCents, KmCents: e.kmCents - prev.kmCents,
			Records: e.records - prev.records})
		prev = e
	})
}

// deltaAt is the usage the seed's rule yields for the message at offset
// (zero when it is no valid message of the sensor).
func (t Truth) deltaAt(sensor string, partition int32, offset int64) store.Totals {
	var u store.Totals
	t.eachDelta(sensor, partition, offset-1, offset, func(_ int64, d store.Totals) { u = d })
	return u
}
