package board

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Partitions added to the topic move keys: the producer puts a key in
// CRC-32(key) modulo the partition count, so with one partition more most
// keys hash elsewhere. The board says which will move when the metadata
// shows the new count (from the partitioner's placements before and
// after), when the producer, each consumer and the audit first use the new
// partitions, and which moved as the audit reads them in the topic: from
// which partition to which, from which offset.

// PartitionsAdded: the lab grew the topic (add-partitions); At is when
// the broker confirmed it, the moment the timings are taken from. Moves
// are the sensors the producer's partitioner sends elsewhere with To
// partitions (kafkacfg.PartitionFor, which the board does not hold).
type PartitionsAdded struct {
	At       time.Time
	Topic    string
	From, To int
	Moves    []PlannedMove
	// Sensors: how many sensors the producer publishes.
	Sensors int
}

// KeyMove is a sensor's key that moved from one partition to another, as
// the audit read the topic: its last record in From, its first in To
// (with that record's own timestamp, epoch ms).
type KeyMove struct {
	Sensor                  string
	From, To                int32
	LastOffset, FirstOffset int64
	FirstTimestamp          int64
}

// PlannedMove is a sensor whose key hashes to another partition with the
// new count: its partition before (From) and after (To).
type PlannedMove struct {
	Sensor   string
	From, To int32
}

// Growth is the topic growing in this run, and when each party saw it.
type Growth struct {
	// At: when the partitions were added (the lab's PartitionsAdded, else
	// the first metadata read showing them); From and To: the counts.
	At       time.Time
	From, To int
	Planned  []PlannedMove
	// ProducerAt: the first watermark read showing a record in a new
	// partition (the producer's first record of a moved key there, to the
	// poll's half second); AuditAt: the first audit read of a new
	// partition; Assigned: per consumer, its first assignment of a new
	// partition. Zero until seen.
	ProducerAt, AuditAt time.Time
	Assigned            map[string]time.Time
}

// keyMoves is the board's state of it.
type keyMoves struct {
	growth *Growth
	// audit: every move the audit read, in order; said: those the
	// timeline has named.
	audit []KeyMove
	said  map[KeyMove]bool
	// recreatedAt: when the topic was last recreated (readings asked
	// before are of the old one).
	recreatedAt time.Time
}

// partitionsAdded takes the lab's growth of the topic: the timings start
// from it, whatever the metadata shows first.
func (b *Board) partitionsAdded(v PartitionsAdded) {
	b.grew(&Growth{At: v.At, From: v.From, To: v.To, Planned: slices.Clone(v.Moves), Assigned: map[string]time.Time{}}, v.Sensors)
}

// noteGrowth takes a metadata read whose partition count went up from
// old's, unless the lab said so first: which keys move, from the
// partitioner's placements before and after.
func (b *Board) noteGrowth(at time.Time, old, rows []PartitionMeta) {
	if g := b.moves.growth; g != nil && g.To == len(rows) && !g.At.After(at) {
		return
	}
	g := &Growth{At: at, From: len(old), To: len(rows), Assigned: map[string]time.Time{}}
	before := placements(old)
	sensors := 0
	for _, ids := range before {
		sensors += len(ids)
	}
	for p, ids := range placements(rows) {
		for _, id := range ids {
			if from, ok := partitionOf(before, id); ok && from != p {
				g.Planned = append(g.Planned, PlannedMove{Sensor: id, From: from, To: p})
			}
		}
	}
	b.grew(g, sensors)
}

// grew makes g the run's growth and says which keys move, in one event.
func (b *Board) grew(g *Growth, sensors int) {
	slices.SortFunc(g.Planned, func(a, c PlannedMove) int { return strings.Compare(a.Sensor, c.Sensor) })
	b.moves.growth = g
	at := g.At
	b.event(at, "", LevelWarn, fmt.Sprintf("the topic grew from %d to %d partitions: CRC-32 of the key mod %d sends %d of %d sensors elsewhere",
		g.From, g.To, g.To, len(g.Planned), sensors))
	if len(g.Planned) > 0 {
		moves := make([]string, len(g.Planned))
		for i, m := range g.Planned {
			moves[i] = fmt.Sprintf("%s p%d→p%d", shortID(m.Sensor), m.From, m.To)
		}
		b.event(at, "", LevelInfo, "keys moving: "+strings.Join(moves, " · "))
	}
}

func placements(rows []PartitionMeta) map[int32][]string {
	out := map[int32][]string{}
	for _, r := range rows {
		out[r.Partition] = r.Sensors
	}
	return out
}

func partitionOf(placed map[int32][]string, id string) (int32, bool) {
	for p, ids := range placed {
		if slices.Contains(ids, id) {
			return p, true
		}
	}
	return 0, false
}

// shortID is a sensor id without its "sensor-" prefix.
func shortID(id string) string { return strings.TrimPrefix(id, "sensor-") }

// noteMoves takes the moves of an audit read: the new ones on the
// timeline, and the audit's first read of a new partition.
func (b *Board) noteMoves(v TruthSnapshot) {
	b.moves.audit = slices.Clone(v.Moves)
	if b.moves.said == nil {
		b.moves.said = map[KeyMove]bool{}
	}
	g := b.moves.growth
	var fresh []string
	for _, m := range v.Moves {
		if b.moves.said[m] {
			continue
		}
		b.moves.said[m] = true
		fresh = append(fresh, fmt.Sprintf("%s p%d→p%d from offset %s", shortID(m.Sensor), m.From, m.To, Count(m.FirstOffset)))
	}
	if len(fresh) > 0 {
		b.event(v.At, "", LevelInfo, "keys moved (audit): "+strings.Join(fresh, " · "))
	}
	if g != nil && g.AuditAt.IsZero() {
		for p := range v.AuditThrough {
			if int(p) >= g.From {
				g.AuditAt = v.At
				b.event(v.At, "", LevelInfo, fmt.Sprintf("the audit reads p%d %s after it was added", p, since(g.At, v.At)))
				break
			}
		}
	}
}

// noteWritten takes a watermark read: the first one showing a record in a
// new partition times the producer's use of it.
func (b *Board) noteWritten(v Offsets) {
	g := b.moves.growth
	if g == nil || !g.ProducerAt.IsZero() || v.At.Before(g.At) {
		return
	}
	for p, hw := range v.HighWatermarks {
		if int(p) >= g.From && hw > 0 {
			g.ProducerAt = v.At
			b.event(v.At, Producer, LevelInfo, fmt.Sprintf("writes to new partition p%d %s after it was added (watermarks read every 0.5 s)",
				p, since(g.At, v.At)))
			return
		}
	}
}

// since is "1.2 s" from at to then ("at once" when then is not later).
func since(at, then time.Time) string {
	if !then.After(at) {
		return "at once"
	}
	return fmt.Sprintf("%.1f s", then.Sub(at).Seconds())
}

// noteAssigned takes a consumer's assignment: the first one of a partition
// added in this run is timed.
func (b *Board) noteAssigned(s statusEvent) {
	g := b.moves.growth
	if g == nil || s.e.Type != status.Assigned || !g.Assigned[s.p.name].IsZero() {
		return
	}
	var added []int32
	for _, p := range s.e.Partitions {
		if int(p) >= g.From {
			added = append(added, p)
		}
	}
	// Only a consumer that ran when they were added saw them appear: one
	// started since was simply assigned them.
	if len(added) == 0 || s.at.Before(g.At) || !s.p.startedAt.Before(g.At) {
		return
	}
	g.Assigned[s.p.name] = s.at
	b.say(s, LevelInfo, fmt.Sprintf("assigned new partition %s %s after it was added", partitionList(added), since(g.At, s.at)))
}

// keyMovesOf is the audit's moves of one sensor, in order.
func (b *Board) keyMovesOf(id string) []KeyMove {
	var out []KeyMove
	for _, m := range b.moves.audit {
		if m.Sensor == id {
			out = append(out, m)
		}
	}
	return out
}

// movedTo reports whether the audit found the sensor's records in exactly
// the partitions its moves chain, ending in want.
func movedTo(moves []KeyMove, read []int32, want int32) bool {
	if len(moves) == 0 || moves[len(moves)-1].To != want {
		return false
	}
	chain := []int32{moves[0].From}
	for _, m := range moves {
		chain = append(chain, m.To)
	}
	slices.Sort(chain)
	return slices.Equal(slices.Compact(chain), read)
}

// Growth is the topic's growth in this run (nil: none seen).
func (b *Board) Growth() *Growth {
	g := b.moves.growth
	if g == nil {
		return nil
	}
	c := *g
	c.Planned = slices.Clone(g.Planned)
	c.Assigned = map[string]time.Time{}
	for k, v := range g.Assigned {
		c.Assigned[k] = v
	}
	return &c
}

// TopicRecreated: the lab deleted the topic and created it again with
// Partitions partitions (recreate-topic), the way back after partitions
// were added. What the board knew of the old topic's log is dropped.
type TopicRecreated struct {
	At         time.Time
	Topic      string
	Partitions int
}

func (b *Board) topicRecreated(v TopicRecreated) {
	b.hwm, b.hwmHistory, b.hwmErr = map[int32]int64{}, nil, nil
	b.committed, b.commitRead.seen = map[int32]int64{}, false
	// The commits went with the topic, and its offsets start again: no
	// expiry, and no skip of the old log, applies to the new one.
	b.expiry = expiry{}
	b.truth, b.auditCount, b.auditThrough = map[string]Truth{}, 0, nil
	b.sensors = nil
	b.parts = partsState{topic: b.parts.topic, at: v.At, minISR: b.parts.minISR}
	b.moves = keyMoves{recreatedAt: v.At}
	b.ret.logStart, b.ret.auditSkipped, b.ret.skipSaid, b.ret.run = nil, nil, nil, nil
	b.event(v.At, "", LevelWarn, fmt.Sprintf("topic %s recreated with %d partitions: its log starts again at offset 0, every key in the partition CRC-32 mod %d gives it",
		v.Topic, v.Partitions, v.Partitions))
}

// before reports whether a reading asked at at is of the topic before it
// was recreated (a poll answered late): not the topic's any more.
func (b *Board) before(at time.Time) bool { return at.Before(b.moves.recreatedAt) }
