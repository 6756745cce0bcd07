package audit

import (
	"cmp"
	"maps"
	"slices"
)

// Acked is one record the producer says the broker acknowledged (a line
// of its acknowledged-records log): where the broker said it stored it,
// its key, its value's timestamp field and the acks setting it was
// produced with. A record sent with acks=0 was never confirmed and has no
// offset (NoOffset).
type Acked struct {
	Partition int32
	Offset    int64
	Key       string
	Timestamp int64
	Acks      string
}

// NoOffset is the offset of a record the broker gave none (acks=0).
const NoOffset = -1

// placed reports whether the broker said where it stored r.
func (r Acked) placed() bool { return r.Offset >= 0 }

// AckCheck compares what the producer acknowledged with what the topic
// holds, by content: an acknowledged record is held when the topic has a
// record of its key with its timestamp (Truth.Holds), wherever the audit
// read it. It keeps only what it cannot settle yet (records at offsets the
// audit has not read) and what is missing; the records found are only
// counted, so a topic of millions costs it nothing per record. Pure: the
// lab feeds it the log's lines and the audit's snapshots. Not safe for
// concurrent use.
//
// A record with no offset (sent with acks=0) is held when the topic has
// its key with its timestamp, at any offset. It is missing only once the
// audit has found, in its partition, a record the producer sent after it:
// one listed after it by the log (the order of the delivery reports, which
// is a partition's send order) and held. Until then it is pending, never
// missing: the audit may not have read that far. The log's order, not the
// timestamps, says which was sent after: each sensor stamps max(now, its
// previous + 1), so after a history burst one sensor's stamps run ahead
// of another's.
type AckCheck struct {
	acknowledged, held, unconfirmed int64
	// pending: per partition, records not settled at the last Check, in
	// the order the log listed them.
	pending map[int32][]listed
	npend   int
	// listedIn: per partition, how many records the log listed;
	// heldThrough: per partition, the place in the log of the latest one
	// found held (0: none).
	listedIn, heldThrough map[int32]int64
	// missing: records the topic did not hold at the last Check, checked
	// again at every Check (a record is missing as far as the audit has
	// read, and it reads on).
	missing []Acked
	latest  map[int32]Acked
	// earlier: per partition, the last record added before the latest
	// one's round (a payload timestamp before it).
	earlier map[int32]Acked
	// unchecked, gaps: the records the log could not list (AddGap).
	unchecked int64
	gaps      []AckGap
}

// NewAckCheck returns a check that has seen no acknowledged record.
func NewAckCheck() *AckCheck {
	return &AckCheck{pending: map[int32][]listed{}, latest: map[int32]Acked{}, earlier: map[int32]Acked{},
		listedIn: map[int32]int64{}, heldThrough: map[int32]int64{}}
}

// listed is a record with its place in its partition's part of the log
// (from 1).
type listed struct {
	Acked
	place int64
}

// Add takes acknowledged records in the log's order.
func (c *AckCheck) Add(recs ...Acked) {
	for _, r := range recs {
		c.acknowledged++
		if !r.placed() {
			c.unconfirmed++
		}
		c.listedIn[r.Partition]++
		c.pending[r.Partition] = append(c.pending[r.Partition], listed{r, c.listedIn[r.Partition]})
		c.npend++
		if prev, ok := c.latest[r.Partition]; ok && prev.Timestamp < r.Timestamp {
			c.earlier[r.Partition] = prev
		}
		c.latest[r.Partition] = r
	}
}

// Pending is how many records are not settled yet.
func (c *AckCheck) Pending() int { return c.npend }

// AckSummary is a Check's outcome.
type AckSummary struct {
	// Acknowledged: every record added; Held: those the topic holds;
	// Pending: those not settled yet: at offsets the audit has not read,
	// or, with no offset, not found with no record sent after them found.
	Acknowledged, Held, Pending int64
	// Unconfirmed: of Acknowledged, the records sent with no offset
	// (acks=0): the broker never confirmed them. PendingUnplaced: of
	// Pending, those.
	Unconfirmed, PendingUnplaced int64
	// Missing: records the topic does not hold, as far as the audit has
	// read, by partition then offset (those with no offset first).
	Missing []Acked
	// Latest: per partition, the last record added; EarlierRound: the last
	// one added before Latest's round (an earlier payload timestamp).
	Latest, EarlierRound map[int32]Acked
	// Unchecked: of Acknowledged, the records the log could not list, in
	// Gaps: neither held nor missing, Missing says nothing about them.
	Unchecked int64
	Gaps      []AckGap
}

// compareAcked orders records by partition, offset, key and timestamp.
func compareAcked(a, b Acked) int {
	return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset),
		cmp.Compare(a.Key, b.Key), cmp.Compare(a.Timestamp, b.Timestamp))
}

// Check settles every record it can against t and returns where they
// stand.
func (c *AckCheck) Check(t Truth) AckSummary {
	var missing []Acked
	for _, r := range c.missing {
		if c.holds(t, r) {
			c.held++
			continue
		}
		missing = append(missing, r)
	}
	unplaced := int64(0)
	for p, recs := range c.pending {
		keep := recs[:0]
		for _, r := range recs {
			held, read := false, true
			if r.placed() {
				held, read = t.Holds(r.Key, r.Timestamp, r.Partition, r.Offset)
			} else {
				held = t.HoldsAnywhere(r.Key, r.Timestamp)
			}
			switch {
			case held:
				c.held++
				c.heldThrough[p] = max(c.heldThrough[p], r.place)
			case !read || !r.placed():
				keep = append(keep, r)
			default:
				missing = append(missing, r.Acked)
			}
		}
		// A record with no offset that the topic does not hold is lost
		// once one the producer sent after it is found.
		kept := keep[:0]
		for _, r := range keep {
			if !r.placed() && r.place < c.heldThrough[p] {
				missing = append(missing, r.Acked)
				continue
			}
			if !r.placed() {
				unplaced++
			}
			kept = append(kept, r)
		}
		c.npend -= len(recs) - len(kept)
		if len(kept) == 0 {
			delete(c.pending, p) // lets a long burst's backing array go
		} else {
			c.pending[p] = kept
		}
	}
	slices.SortFunc(missing, compareAcked)
	c.missing = missing
	latest := make(map[int32]Acked, len(c.latest))
	for p, r := range c.latest {
		latest[p] = r
	}
	return AckSummary{Acknowledged: c.acknowledged, Held: c.held, Pending: int64(c.npend),
		Unconfirmed: c.unconfirmed, PendingUnplaced: unplaced,
		Missing: slices.Clone(missing), Latest: latest, EarlierRound: maps.Clone(c.earlier), Unchecked: c.unchecked, Gaps: slices.Clone(c.gaps)}
}

// holds reports whether the topic, as far as the audit has read, holds r
// by its content: at its offset or anywhere else.
func (c *AckCheck) holds(t Truth, r Acked) bool {
	if !r.placed() {
		return t.HoldsAnywhere(r.Key, r.Timestamp)
	}
	held, _ := t.Holds(r.Key, r.Timestamp, r.Partition, r.Offset)
	return held
}
