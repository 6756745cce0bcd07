package audit

import (
	"slices"
	"time"
)

// AckGap is a span of acknowledged records the producer could not list in
// its log (a full disk): they count as acknowledged, but none of them can
// be looked up, so the check says nothing about them. From and To: when
// the first and the last were acknowledged; per partition the first and
// last offset.
type AckGap struct {
	Count      int64
	From, To   time.Time
	Partitions []AckGapPartition
	Err        string
}

// AckGapPartition is a gap's records on one partition.
type AckGapPartition struct {
	Partition               int32
	FirstOffset, LastOffset int64
	Count                   int64
}

// AddGap takes a span the log could not list, in the log's order.
func (c *AckCheck) AddGap(g AckGap) {
	g.Partitions = slices.Clone(g.Partitions)
	c.acknowledged += g.Count
	c.unchecked += g.Count
	c.gaps = append(c.gaps, g)
}
