package board

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// AckedGap is a span of acknowledged records the producer could not list
// in its log (a full disk), as the marker it wrote once space returned
// says: they count as acknowledged and go unchecked (neither held nor
// missing). From, To: when the first and the last were acknowledged.
type AckedGap struct {
	Count      int64
	From, To   time.Time
	Partitions []AckedGapPartition
	Err        string
}

// AckedGapPartition is a gap's records on one partition.
type AckedGapPartition struct {
	Partition               int32
	FirstOffset, LastOffset int64
	Count                   int64
}

// onAckedLogFailed: the producer cannot write its log of acknowledged
// records; it publishes on, so its state stays, but it is its last error.
func (b *Board) onAckedLogFailed(s statusEvent) {
	s.p.lastError = s.e.Error
	b.acks.logFailing = s.e.Error
	b.say(s, LevelBad, s.e.Error+"; it publishes on, counts the acks it cannot list and names them once it can write again")
}

// sayGaps puts every gap not named yet on the timeline.
func (b *Board) sayGaps(v AckedCheck) {
	for _, g := range v.Gaps[min(b.acks.gapsSaid, len(v.Gaps)):] {
		b.event(v.At, Producer, LevelBad, fmt.Sprintf("acknowledged-records log: %s not written between %s and %s (%s: %s); not checked",
			Plural(g.Count, "ack"), g.From.Local().Format("15:04:05"), g.To.Local().Format("15:04:05"), gapOffsets(g), g.Err))
	}
	if len(v.Gaps) > b.acks.gapsSaid {
		// A marker is written only once the log is written again.
		b.acks.logFailing = ""
	}
	b.acks.gapsSaid = max(b.acks.gapsSaid, len(v.Gaps))
}

// gapOffsets says where a gap's records were stored: "p0 offsets 10–90 (41), p1 offset 7 (1)".
func gapOffsets(g AckedGap) string {
	parts := make([]string, 0, len(g.Partitions))
	for _, p := range g.Partitions {
		if p.FirstOffset == p.LastOffset {
			parts = append(parts, fmt.Sprintf("p%d offset %d (%d)", p.Partition, p.FirstOffset, p.Count))
			continue
		}
		parts = append(parts, fmt.Sprintf("p%d offsets %d–%d (%d)", p.Partition, p.FirstOffset, p.LastOffset, p.Count))
	}
	return strings.Join(parts, ", ")
}

// ReportAckGap is one span the report's acks did not check: how many
// acknowledged records, acknowledged between From and To, per partition
// the offsets they were stored at, and why the log could not list them.
type ReportAckGap struct {
	Count      int64                   `json:"count"`
	From       time.Time               `json:"from"`
	To         time.Time               `json:"to"`
	Partitions []ReportAckGapPartition `json:"partitions"`
	Error      string                  `json:"error"`
}

// ReportAckGapPartition is a span's records on one partition.
type ReportAckGapPartition struct {
	Partition   int32 `json:"partition"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
	Count       int64 `json:"count"`
}

func reportGaps(gaps []AckedGap) []ReportAckGap {
	out := make([]ReportAckGap, 0, len(gaps))
	for _, g := range gaps {
		r := ReportAckGap{Count: g.Count, From: g.From.UTC(), To: g.To.UTC(), Error: g.Err, Partitions: []ReportAckGapPartition{}}
		for _, p := range g.Partitions {
			r.Partitions = append(r.Partitions, ReportAckGapPartition(p))
		}
		out = append(out, r)
	}
	return slices.Clip(out)
}
