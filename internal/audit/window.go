package audit

import (
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// The window rule: which messages a consumer's recorded usage stands for,
// and what the seed's rule yields over exactly those messages.
//
// consumer-usage's first checkpoint of a sensor is the reference its first
// delta is taken from; every later delta it records carries the offset of
// the message it came from. Recorded totals read as one sensor's summary
// (its records 1..n, one document), together with the furthest record they
// include, therefore stand for the messages after the first checkpoint
// through that record: no more (a message processed after the read is not
// in it) and no less (a message before it whose
// delta is missing was lost). Comparing the totals with the audit over that
// window compares one cut of the stream with itself.

// Window is what one sensor's recorded totals cover.
type Window struct {
	// First is where consumer-usage's first checkpoint of the sensor was
	// read (store.Checkpoint.FirstPartition/FirstOffset): the reference,
	// contributing nothing itself.
	First store.Position
	// Covered is the recorded totals with the furthest record they include
	// (store.Covered, from the same read as the totals).
	Covered store.Covered
}

// Expectation is what the audit can say about a Window.
type Expectation int

const (
	// NoWindow: the records do not fit one window (they come from
	// partitions the sensor's key was never in, or from several the key
	// was written to at once, or the summary does not say how far each was
	// read), so no usage can be expected of them.
	NoWindow Expectation = iota
	// AuditBehind: the audit has not read as far as the furthest record
	// yet; the comparison waits for it (this is not a drift).
	AuditBehind
	// Expected: the usage over exactly the window is known.
	Expected
)

func (e Expectation) String() string {
	switch e {
	case NoWindow:
		return "no window"
	case AuditBehind:
		return "audit behind"
	case Expected:
		return "expected"
	}
	return "expectation?"
}

// ExpectedOver returns the usage the seed's rule yields for sensor over the
// messages after w.First through the furthest record w.Covered includes,
// in exact hundredths; state says whether that is known (Expected), not yet
// (AuditBehind) or not defined (NoWindow). Without records the window is
// empty and nothing is expected. Records at or before w.First (a naive
// replay from earliest) have an empty window too: all they hold is
// over-counted. Pure and O(log n).
func (t Truth) ExpectedOver(sensor string, w Window) (usage store.Totals, state Expectation) {
	c := w.Covered
	if c.Records == 0 {
		return store.Totals{}, Expected
	}
	if c.Partitions != 1 || c.Through.Partition != w.First.Partition {
		return t.expectedAcross(sensor, w)
	}
	if c.Through.Offset <= w.First.Offset {
		return store.Totals{}, Expected
	}
	if !t.hasRead(c.Through.Partition, c.Through.Offset) {
		return store.Totals{}, AuditBehind
	}
	u, ok := t.ExpectedUsageBetween(sensor, w.First.Partition, w.First.Offset, c.Through.Offset)
	if !ok {
		// The audit has read past the records and found no valid message of
		// the sensor there: none of them stands for a message.
		return store.Totals{}, Expected
	}
	return u, Expected
}

// Cut is one sensor's line of a consistent comparison: the recorded totals
// with the furthest record they include, and the audit's usage over exactly
// those records (Expected is meaningful when State is Expected).
type Cut struct {
	store.Covered
	// HasFirst: consumer-usage has a first checkpoint of the sensor, read
	// at First.
	HasFirst bool
	First    store.Position
	State    Expectation
	Expected store.Totals
}

// ExpectedForCut applies ExpectedOver to every sensor that has recorded
// usage or a checkpoint. covered is one read of the usage summaries
// (store.UsageCoverage, or consumer-query's answer); checkpoints gives each
// sensor's first checkpointed message. A sensor with records and no
// checkpoint has NoWindow; one with a checkpoint and no records expects
// nothing yet.
func ExpectedForCut(t Truth, covered map[string]store.Covered, checkpoints map[string]store.Checkpoint) map[string]Cut {
	out := make(map[string]Cut, max(len(covered), len(checkpoints)))
	for id, c := range covered {
		out[id] = Cut{Covered: c}
	}
	for id := range checkpoints {
		if _, ok := out[id]; !ok {
			out[id] = Cut{}
		}
	}
	for id, cut := range out {
		cp, ok := checkpoints[id]
		cut.HasFirst = ok
		if ok {
			cut.First = store.Position{Partition: cp.FirstPartition, Offset: cp.FirstOffset}
			cut.Expected, cut.State = t.ExpectedOver(id, Window{First: cut.First, Covered: cut.Covered})
		} else {
			cut.State = NoWindow
		}
		out[id] = cut
	}
	return out
}

// expectedAcross is ExpectedOver for records that come from another
// partition than the first checkpoint's, or from several: the sensor's key
// moved (partitions were added), and its series are chained in the key's
// order. In each partition the window runs to its furthest record: from
// the first checkpoint in its partition, from the start in a later one (its
// first record's usage taken after the previous partition's last), and
// records in a partition the key left before the first checkpoint stand for
// nothing.
func (t Truth) expectedAcross(sensor string, w Window) (store.Totals, Expectation) {
	c := w.Covered
	if len(c.Furthest) != c.Partitions {
		return store.Totals{}, NoWindow
	}
	for _, pos := range c.Furthest {
		if !t.hasRead(pos.Partition, pos.Offset) {
			return store.Totals{}, AuditBehind
		}
	}
	if st, ok := t.Sensor(sensor); !ok || st.Valid == 0 {
		return store.Totals{}, Expected // none of the records stands for a message
	}
	ch, ok := t.chain(sensor)
	first := index(ch, w.First.Partition)
	if !ok || first < 0 {
		return store.Totals{}, NoWindow
	}
	var u store.Totals
	for _, pos := range c.Furthest {
		i := index(ch, pos.Partition)
		switch {
		case i < 0:
			return store.Totals{}, NoWindow
		case i < first:
		case i == first:
			u = u.Plus(ch[i].usage(w.First.Offset, pos.Offset))
		default:
			// The link is taken after the previous partition's last record:
			// it must have been read.
			if !t.caughtUp(ch[i-1].partition) {
				return store.Totals{}, AuditBehind
			}
			u = u.Plus(ch[i].usage(-1, pos.Offset))
		}
	}
	return u, Expected
}
