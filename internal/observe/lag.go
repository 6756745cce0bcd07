package observe

import (
	"sort"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// PartitionLag is one partition's distance from the end of the log.
type PartitionLag struct {
	Partition int32
	// HighWatermark is the current log-end offset; -1 when unknown.
	HighWatermark int64
	// Offset is the next offset the consumer will read: its committed
	// offset (GroupLag) or its own reported position (PositionLag); -1 when
	// it has none.
	Offset int64
	// Lag is HighWatermark - Offset, clamped at 0 (a watermark read before
	// the consumer's latest position is stale, not a negative backlog).
	// Meaningful only when Known.
	Lag int64
	// Known is false when there is no position to measure from: a group
	// that never committed on this partition, a consumer that has not
	// reported it, or a watermark that could not be read.
	Known bool
}

// Lag is a consumer's lag over a topic.
type Lag struct {
	// Total sums Lag over the Known partitions only.
	Total int64
	// Unknown counts partitions without a position or watermark.
	Unknown int
	// Partitions is sorted by partition id.
	Partitions []PartitionLag
}

// AllKnown reports whether every partition has a lag (Total is complete).
func (l Lag) AllKnown() bool { return l.Unknown == 0 && len(l.Partitions) > 0 }

// GroupLag is the broker's view of a group's lag: high watermark minus
// committed offset per partition, as kafka-consumer-groups.sh computes it.
//
// A partition the group never committed is reported as unknown, not as its
// whole log: with auto.offset.reset=latest such a consumer would start at
// the end, with earliest at the beginning, and the broker cannot tell which,
// so any number would be invented. The dashboard says "no commit" instead.
//
// Pass the current watermarks, not ones the consumer reported: lag read at
// display time keeps growing while a consumer is dead (Burrow's lesson).
func GroupLag(hwm, committed map[int32]int64) Lag {
	offsets := make(map[int32]int64, len(committed))
	for p, off := range committed {
		offsets[p] = off
	}
	return lagOf(hwm, offsets)
}

// PositionLag is the lag of a consumer that never commits (consumer-current):
// its own reported positions against the current high watermarks. The
// HighWatermark inside each position is what the consumer last learned and
// is deliberately ignored.
func PositionLag(hwm map[int32]int64, positions []status.Position) Lag {
	offsets := make(map[int32]int64, len(positions))
	for _, p := range positions {
		offsets[p.Partition] = p.Offset
	}
	return lagOf(hwm, offsets)
}

// lagOf computes per-partition lag over the union of partitions of hwm and
// offsets; a negative value in either map means "none".
func lagOf(hwm, offsets map[int32]int64) Lag {
	seen := make(map[int32]bool, len(hwm)+len(offsets))
	var ids []int32
	for _, m := range []map[int32]int64{hwm, offsets} {
		for p := range m {
			if !seen[p] {
				seen[p] = true
				ids = append(ids, p)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })

	var out Lag
	for _, p := range ids {
		pl := PartitionLag{Partition: p, HighWatermark: -1, Offset: -1}
		h, hok := hwm[p]
		o, ook := offsets[p]
		if hok && h >= 0 {
			pl.HighWatermark = h
		}
		if ook && o >= 0 {
			pl.Offset = o
		}
		if pl.HighWatermark >= 0 && pl.Offset >= 0 {
			pl.Known = true
			pl.Lag = max(pl.HighWatermark-pl.Offset, 0)
			out.Total += pl.Lag
		} else {
			out.Unknown++
		}
		out.Partitions = append(out.Partitions, pl)
	}
	return out
}
