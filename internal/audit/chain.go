package audit

import (
	"cmp"
	"slices"

	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Keys that moved. The producer puts a key in CRC-32(key) modulo the
// partition count (kafkacfg.PartitionFor): partitions added to the topic
// send many keys elsewhere, so a sensor's records are in one partition up
// to the change and in another after it. Each partition keeps its order;
// the key's order is its series one after the other, the older first, and
// the first record in the new partition has the last one in the old as its
// predecessor. The usage of a window that spans the move is chained that
// way (chain, ExpectedOver): it is what the seed's rule yields reading the
// key in its order, which is what a consumer does not do when it reads the
// new partition before it has finished the old.

// Series is one sensor's valid records in one partition.
type Series struct {
	Partition int32
	// First and Last are its first and last valid records, by offset.
	First, Last Located
	Valid       int64
}

// Move is a sensor's key going from one partition to the next.
type Move struct {
	Sensor   string
	From, To int32
	// LastOffset is the sensor's last record in From, FirstOffset its
	// first in To; FirstTimestamp that record's own timestamp (epoch ms).
	LastOffset, FirstOffset int64
	FirstTimestamp          int64
}

// chain orders the sensor's series in the key's order and says whether
// they follow one another in time (Chained), with the moves between them.
func (st *SensorTruth) chain() {
	slices.SortFunc(st.Series, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.First.Message.Timestamp, b.First.Message.Timestamp), cmp.Compare(a.Partition, b.Partition))
	})
	st.Chained = true
	for i := 1; i < len(st.Series); i++ {
		if st.Series[i-1].Last.Message.Timestamp >= st.Series[i].First.Message.Timestamp {
			st.Chained = false
		}
	}
	if !st.Chained {
		return
	}
	for i := 1; i < len(st.Series); i++ {
		a, b := st.Series[i-1], st.Series[i]
		st.Moves = append(st.Moves, Move{Sensor: st.SensorID, From: a.Partition, To: b.Partition,
			LastOffset: a.Last.Offset, FirstOffset: b.First.Offset, FirstTimestamp: b.First.Message.Timestamp})
	}
}

// Moves lists every sensor's moves, by sensor then in the key's order.
func (t Truth) Moves() []Move {
	var out []Move
	for _, st := range t.Sensors {
		out = append(out, st.Moves...)
	}
	return out
}

// chainPart is one series of a sensor's chain.
type chainPart struct {
	partition int32
	entries   entryView
	// first is the offset of its first record; link the usage that record
	// yields after the previous part's last (zero for the first part).
	first int64
	link  store.Totals
}

// chain is the sensor's series in the key's order with the usage linking
// each to the one before; false when the sensor has no valid record or its
// series overlap in time (no order to chain them in: then no link is
// made, and only one partition's usage means anything).
func (t Truth) chain(sensor string) ([]chainPart, bool) {
	st, ok := t.Sensor(sensor)
	if !ok || len(st.Series) == 0 {
		return nil, false
	}
	out := make([]chainPart, len(st.Series))
	for i, s := range st.Series {
		out[i] = chainPart{partition: s.Partition, entries: t.series[seriesKey{sensor, s.Partition}], first: s.First.Offset}
		if i > 0 && st.Chained {
			out[i].link = linkUsage(st.Series[i-1].Last.Message, s.First.Message)
		}
	}
	return out, st.Chained
}

// linkUsage is the usage the seed's rule yields for cur after prev, in
// hundredths (zero when the rule records nothing), as the ledger sums it.
func linkUsage(prev, cur telemetry.Message) store.Totals {
	u, record := telemetry.Delta(prev, cur)
	if !record {
		return store.Totals{}
	}
	return store.Totals{HoursCents: store.Cents(u.DeltaHours), KmCents: store.Cents(u.DeltaKm), Records: 1}
}

// index is the position of partition in the chain (-1: not in it).
func index(ch []chainPart, partition int32) int {
	return slices.IndexFunc(ch, func(c chainPart) bool { return c.partition == partition })
}

// usage is what the part's records in (after, through] yield, its first
// record's link included when it is in the window.
func (c chainPart) usage(after, through int64) store.Totals {
	start, end := c.entries.through(after), c.entries.through(through)
	if end.offset <= start.offset {
		return store.Totals{}
	}
	u := store.Totals{HoursCents: end.hoursCents - start.hoursCents, KmCents: end.kmCents - start.kmCents,
		Records: end.records - start.records}
	if after < c.first && through >= c.first {
		u = u.Plus(c.link)
	}
	return u
}

// eachDelta calls fn for every record of the part in (after, through]
// with the usage the rule yields for it (its first record: the link).
func (c chainPart) eachDelta(after, through int64, fn func(offset int64, u store.Totals)) {
	prev := c.entries.through(after)
	c.entries.each(after, through, func(e entry) {
		u := store.Totals{HoursCents: e.hoursCents - prev.hoursCents, KmCents: e.kmCents - prev.kmCents,
			Records: e.records - prev.records}
		if e.offset == c.first {
			u = c.link
		}
		fn(e.offset, u)
		prev = e
	})
}

// caughtUp reports whether the audit has read partition to the log end it
// last learned.
func (t Truth) caughtUp(partition int32) bool {
	for _, p := range t.Partitions {
		if p.Partition == partition {
			return p.CaughtUp()
		}
	}
	return false
}

// deltaAt is the usage the rule yields for the part's record at offset.
func (c chainPart) deltaAt(offset int64) store.Totals {
	var u store.Totals
	c.eachDelta(offset-1, offset, func(_ int64, d store.Totals) { u = d })
	return u
}
