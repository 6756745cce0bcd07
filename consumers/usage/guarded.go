package usage

import (
	"context"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// handleGuarded applies rs in guarded mode, in the steps HandleBatch lists.
func (p *Processor) handleGuarded(ctx context.Context, rs []Record) ([]Result, error) {
	b := &guardedBatch{p: p, rs: rs, out: make([]Result, len(rs)), pending: map[string]store.Checkpoint{},
		before: map[string]store.Summary{}, lastApplied: -1, write: store.WriteID()}
	steps := []func(context.Context) error{
		b.skipAppliedAndPlan, // 1
		b.appendUsage,        // 2
		b.saveCheckpoints,    // 3
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return b.out, err
		}
	}
	b.count()
	if b.lastApplied >= 0 && p.crashAt(lesson.AfterCheckpoint, rs[b.lastApplied]) {
		return b.out, ErrCrashed
	}
	return b.out, nil
}

// guardedBatch is one batch on its way through handleGuarded's steps.
type guardedBatch struct {
	p   *Processor
	rs  []Record
	out []Result

	// After step 1, the checkpoints as the batch leaves them, sensors in
	// the order first seen.
	pending map[string]store.Checkpoint
	touched []string

	recs   []store.UsageRecord
	recOf  []int                    // the index in rs of each record
	before map[string]store.Summary // each sensor's summary before its first record of the batch
	write  string                   // this batch's records, across its retries

	applied, replayed, lastApplied int
}

// checkpoint is a sensor's checkpoint as the records before in the batch
// leave it.
func (b *guardedBatch) checkpoint(id string) (store.Checkpoint, bool) {
	if cp, ok := b.pending[id]; ok {
		return cp, true
	}
	return b.p.Checkpoint(id)
}

// skipAppliedAndPlan is step 1: it skips records already applied and
// plans the usage records and checkpoints of the others.
func (b *guardedBatch) skipAppliedAndPlan(ctx context.Context) error {
	for i, r := range b.rs {
		m, prev, known, ok, res, err := b.p.decode(ctx, r, b.checkpoint)
		b.out[i] = res
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if known && prev.Partition == r.Partition && r.Offset <= prev.Offset {
			b.out[i] = Result{Outcome: Replayed}
			b.replayed++
			continue
		}
		var sum store.Summary
		if known {
			sum = b.planUsage(i, m, prev)
		}
		b.planCheckpoint(i, m, prev, known, sum)
	}
	return nil
}

// planUsage plans the usage record of rs[i] (message m, its sensor's
// checkpoint prev) and returns the sensor's summary through it.
func (b *guardedBatch) planUsage(i int, m telemetry.Message, prev store.Checkpoint) store.Summary {
	r, sum := b.rs[i], prev.Summary
	u, record := telemetry.Delta(prev.Message, m)
	if !record {
		return sum
	}
	b.out[i].Recorded, b.out[i].Usage = true, u
	if sum.Recorded(r.Partition, r.Offset) {
		// Its record is already folded (an orphan found at Load): the
		// checkpoint is all that is missing.
		return sum
	}
	if _, ok := b.before[m.SensorID]; !ok {
		b.before[m.SensorID] = sum
	}
	rec := store.UsageRecord{Usage: u, Partition: r.Partition, Offset: r.Offset, Reading: &m,
		Effect: store.EffectID(b.p.cfg.Topic, r.Partition, r.Offset), Write: b.write,
		Writer: b.p.cfg.Writer, BaseTimestamp: prev.Message.Timestamp}
	b.recs, b.recOf = append(b.recs, rec), append(b.recOf, i)
	return sum.Fold(rec) // for the Recorded rule of its next records
}

// planCheckpoint makes rs[i] its sensor's pending checkpoint.
func (b *guardedBatch) planCheckpoint(i int, m telemetry.Message, prev store.Checkpoint, known bool, sum store.Summary) {
	r := b.rs[i]
	if _, ok := b.pending[m.SensorID]; !ok {
		b.touched = append(b.touched, m.SensorID)
	}
	cp := store.Checkpoint{SensorID: m.SensorID, Message: m, Partition: r.Partition, Offset: r.Offset, Summary: sum,
		FirstPartition: r.Partition, FirstOffset: r.Offset, FirstTimestamp: m.Timestamp}
	if known {
		// The audit's window for the sensor starts at its first message.
		cp.FirstPartition, cp.FirstOffset, cp.FirstTimestamp = prev.FirstPartition, prev.FirstOffset, prev.FirstTimestamp
	}
	b.pending[m.SensorID] = cp
	b.applied++
	b.lastApplied = i
}

// appendUsage is step 2: the batch's usage records in one ordered insert.
func (b *guardedBatch) appendUsage(ctx context.Context) error {
	if len(b.recs) == 0 {
		return nil
	}
	p := b.p
	written := make([]Record, len(b.recOf))
	for j, i := range b.recOf {
		written[j] = b.rs[i]
	}
	if err := p.holdEffect(ctx, written); err != nil {
		return err
	}
	var batch store.Batch
	err := p.retry(ctx, "insert usage", func(ctx context.Context) error {
		var err error
		batch, err = p.cfg.Store.AppendUsageBatch(ctx, b.before, b.recs)
		return err
	})
	if err != nil {
		return err
	}
	for j, i := range b.recOf {
		b.out[i].Inserted = batch.New[j]
	}
	p.noteLate(written, batch.New)
	p.noteRefused(written, batch.New)
	for id, sum := range batch.Summaries {
		cp := b.pending[id]
		cp.Summary = sum
		b.pending[id] = cp
	}
	p.records.Add(int64(len(b.recs)))
	if p.crashAt(lesson.AfterDelta, b.rs[b.recOf[len(b.recOf)-1]]) {
		return ErrCrashed
	}
	return nil
}

// saveCheckpoints is step 3: one checkpoint per sensor, for the partitions
// still owned.
func (b *guardedBatch) saveCheckpoints(ctx context.Context) error {
	p := b.p
	for _, id := range b.touched {
		cp := b.pending[id]
		written := false
		err := p.retry(ctx, "save checkpoint", func(ctx context.Context) error {
			// Under the fence, so a revoke either waits for this write or
			// comes first and stops it: a checkpoint is never written
			// after its partition went to the next owner, whose newer one
			// it could move back. Revoked while the records were in
			// flight: the next owner folds them (store.ResumeCheckpoints)
			// and writes the checkpoint.
			p.fence.Lock()
			defer p.fence.Unlock()
			if !p.owned(cp.Partition) {
				return nil
			}
			written = true
			return p.cfg.Store.SaveCheckpoint(ctx, cp)
		})
		if err != nil {
			return err
		}
		if written {
			p.checkpoints[id] = cp
		}
	}
	return nil
}

// count adds the batch to the counters, but for the records of partitions
// no longer owned: not this consumer's to count, the next owner processes
// them.
func (b *guardedBatch) count() {
	applied, replayed := b.applied, b.replayed
	for i, r := range b.rs {
		if b.p.owned(r.Partition) {
			continue
		}
		switch b.out[i].Outcome {
		case Applied:
			applied--
		case Replayed:
			replayed--
		}
	}
	b.p.processed.Add(int64(applied + replayed))
	b.p.replayed.Add(int64(replayed))
}
