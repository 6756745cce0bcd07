package audit

import (
	"cmp"
	"maps"
	"slices"
)

// Acked is one record the producer says the broker acknowledged (a line
// of its acknowledged-records log): where the broker said it stored it,
// its key, its value's timestamp field and the acks setting it was
// produced with.
type Acked struct {
	Partition int32
	Offset    int64
	Key       string
	Timestamp int64
	Acks      string
}

// AckCheck compares what the producer acknowledged with what the topic
// holds, by content: an acknowledged record is held when the topic has a
// record of its key with its timestamp (Truth.Holds), wherever the audit
// read it. It keeps only what it cannot settle yet (records at offsets the
// audit has not read) and what is missing; the records found are only
// counted, so a topic of millions costs it nothing per record. Pure: the
// lab feeds it the log's lines and the audit's snapshots. Not safe for
// concurrent use.
type AckCheck struct {
	acknowledged, held int64
	// pending: per partition, records whose offset the audit had not read
	// at the last Check, in the order the log listed them.
	pending map[int32][]Acked
	npend   int
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
	return &AckCheck{pending: map[int32][]Acked{}, latest: map[int32]Acked{}, earlier: map[int32]Acked{}}
}

// Add takes acknowledged records in the log's order.
func (c *AckCheck) Add(recs ...Acked) {
	for _, r := range recs {
		c.acknowledged++
		c.pending[r.Partition] = append(c.pending[r.Partition], r)
		c.npend++
		if prev, ok := c.latest[r.Partition]; ok && prev.Timestamp < r.Timestamp {
			c.earlier[r.Partition] = prev
		}
		c.latest[r.Partition] = r
	}
}

// Pending is how many records wait for the audit to read their offset.
func (c *AckCheck) Pending() int { return c.npend }

// AckSummary is a Check's outcome.
type AckSummary struct {
	// Acknowledged: every record added; Held: those the topic holds;
	// Pending: those at offsets the audit has not read yet.
	Acknowledged, Held, Pending int64
	// Missing: records the topic does not hold, as far as the audit has
	// read, by partition then offset.
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
		if held, _ := t.Holds(r.Key, r.Timestamp, r.Partition, r.Offset); held {
			c.held++
			continue
		}
		missing = append(missing, r)
	}
	for p, recs := range c.pending {
		keep := recs[:0]
		for _, r := range recs {
			held, read := t.Holds(r.Key, r.Timestamp, r.Partition, r.Offset)
			switch {
			case !read:
				keep = append(keep, r)
			case held:
				c.held++
			default:
				missing = append(missing, r)
			}
		}
		c.npend -= len(recs) - len(keep)
		if len(keep) == 0 {
			delete(c.pending, p) // lets a long burst's backing array go
		} else {
			c.pending[p] = keep
		}
	}
	slices.SortFunc(missing, compareAcked)
	c.missing = missing
	latest := make(map[int32]Acked, len(c.latest))
	for p, r := range c.latest {
		latest[p] = r
	}
	return AckSummary{Acknowledged: c.acknowledged, Held: c.held, Pending: int64(c.npend),
		Missing: slices.Clone(missing), Latest: latest, EarlierRound: maps.Clone(c.earlier), Unchecked: c.unchecked, Gaps: slices.Clone(c.gaps)}
}
