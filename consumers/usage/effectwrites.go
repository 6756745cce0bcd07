package usage

import (
	"context"
	"slices"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// holdEffect holds the usage writes of rs for the effect delay, announcing
// them in flight; an error means ctx ended first and nothing was sent.
func (p *Processor) holdEffect(ctx context.Context, rs []Record) error {
	d := p.cfg.EffectDelay.Get()
	if d <= 0 {
		return nil
	}
	for _, g := range byPartition(rs, nil) {
		p.log.Info("usage write held (in flight)", "partition", g.partition, "offset", g.first, "messages", g.count, "delay", d)
		p.cfg.Emitter.Emit(status.Event{Type: status.EffectHeld, Partition: g.partition, Offset: g.first,
			Count: g.count, Millis: d.Milliseconds()})
	}
	if !p.cfg.EffectDelay.hold(ctx) {
		return ctx.Err()
	}
	return nil
}

// noteLate counts and reports the writes of rs that completed after their
// partition was revoked; isNew[i] says whether rs[i]'s record was new.
func (p *Processor) noteLate(rs []Record, isNew []bool) {
	for _, g := range byPartition(rs, isNew) {
		if p.owned(g.partition) {
			continue
		}
		p.late.Add(g.count)
		p.log.Warn("usage write completed after its partition was revoked", "partition", g.partition,
			"offset", g.first, "messages", g.count, "refused_as_second_effects", g.refused)
		p.cfg.Emitter.Emit(status.Event{Type: status.LateWrite, Partition: g.partition, Offset: g.first,
			Count: g.count, Prevented: g.refused})
	}
}

// noteRefused counts the records of rs the store refused as second
// effects (isNew false) and reports those of owned partitions (a late
// write's are in its LateWrite).
func (p *Processor) noteRefused(rs []Record, isNew []bool) {
	for _, g := range byPartition(rs, isNew) {
		if g.refused == 0 {
			continue
		}
		p.prevented.Add(g.refused)
		if !p.owned(g.partition) {
			continue
		}
		p.log.Info("second effects refused: already recorded", "partition", g.partition, "offset", g.firstRefused, "messages", g.refused)
		p.cfg.Emitter.Emit(status.Event{Type: status.EffectRefused, Partition: g.partition, Offset: g.firstRefused, Count: g.refused})
	}
}

// partitionRun is the records of one partition in a write.
type partitionRun struct {
	partition           int32
	first, firstRefused int64
	count, refused      int64
}

// byPartition groups rs by partition in the order first seen; isNew (nil:
// all new) marks the refused ones.
func byPartition(rs []Record, isNew []bool) []partitionRun {
	var out []partitionRun
	for i, r := range rs {
		j := slices.IndexFunc(out, func(g partitionRun) bool { return g.partition == r.Partition })
		if j < 0 {
			out = append(out, partitionRun{partition: r.Partition, first: r.Offset, firstRefused: -1})
			j = len(out) - 1
		}
		out[j].count++
		if isNew != nil && !isNew[i] {
			if out[j].refused == 0 {
				out[j].firstRefused = r.Offset
			}
			out[j].refused++
		}
	}
	return out
}
