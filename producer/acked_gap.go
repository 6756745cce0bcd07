package producer

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// AckedGapLine is the marker line the acknowledged-records log gets where
// it could not be written (a full disk): {"not_logged":{...}}, written the
// moment a write succeeds again, before the records that follow it.
type AckedGapLine struct {
	NotLogged *AckedGap `json:"not_logged"`
}

// AckedGap is a span of acknowledged records the log could not list: how
// many, when the first and the last of them were acknowledged (the
// producer's clock), per partition the first and last offset, and the
// write error that kept them out.
type AckedGap struct {
	Count      int64               `json:"count"`
	From       time.Time           `json:"from"`
	To         time.Time           `json:"to"`
	Partitions []AckedGapPartition `json:"partitions"`
	Error      string              `json:"error"`
}

// AckedGapPartition is a gap's records on one partition. The offsets bound
// the records the broker gave one: UnknownOffset both when it gave none
// (every one was sent with acks=0).
type AckedGapPartition struct {
	Partition   int32 `json:"partition"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
	Count       int64 `json:"count"`
}

// ackedGap counts the acknowledged records not logged since the last
// marker: counts and bounds only, so a long outage costs no memory per
// record.
type ackedGap struct {
	count    int64
	from, to time.Time
	parts    map[int32]*AckedGapPartition
	err      error
}

func (g *ackedGap) add(r pendingAck) {
	if g.count == 0 || r.at.Before(g.from) {
		g.from = r.at
	}
	if r.at.After(g.to) {
		g.to = r.at
	}
	g.count++
	if g.parts == nil {
		g.parts = map[int32]*AckedGapPartition{}
	}
	p := g.parts[r.partition]
	if p == nil {
		p = &AckedGapPartition{Partition: r.partition, FirstOffset: UnknownOffset, LastOffset: UnknownOffset}
		g.parts[r.partition] = p
	}
	// A record sent with acks=0 has no offset to bound the span with.
	if r.offset != UnknownOffset {
		if p.FirstOffset == UnknownOffset || r.offset < p.FirstOffset {
			p.FirstOffset = r.offset
		}
		p.LastOffset = max(p.LastOffset, r.offset)
	}
	p.Count++
}

// report is the gap as its marker line says it.
func (g *ackedGap) report() AckedGap {
	out := AckedGap{Count: g.count, From: g.from.UTC(), To: g.to.UTC(), Partitions: []AckedGapPartition{}}
	for _, p := range slices.Sorted(maps.Keys(g.parts)) {
		out.Partitions = append(out.Partitions, *g.parts[p])
	}
	if g.err != nil {
		out.Error = g.err.Error()
	}
	return out
}

// appendGapLine appends g's marker line.
func appendGapLine(b []byte, g AckedGap) []byte {
	line, err := json.Marshal(AckedGapLine{NotLogged: &g})
	if err != nil { // plain fields: cannot happen
		return b
	}
	return append(append(b, line...), '\n')
}
