package usage

import (
	"context"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

func (p *Processor) handleNaive(ctx context.Context, r Record) (Result, error) {
	m, prev, known, ok, res, err := p.decode(ctx, r, p.Checkpoint)
	if !ok {
		return res, err
	}
	var sum store.Summary
	if known {
		sum = prev.Summary
		if u, record := telemetry.Delta(prev.Message, m); record {
			rec := store.UsageRecord{Usage: u, Partition: r.Partition, Offset: r.Offset,
				Writer: p.cfg.Writer, BaseTimestamp: prev.Message.Timestamp}
			var app store.Appended
			if err := p.holdEffect(ctx, []Record{r}); err != nil {
				return res, err
			}
			err = p.retry(ctx, "insert usage", func(ctx context.Context) error {
				// As the seed's insert_one: every attempt is a write of its
				// own, so a retry after a lost answer adds a record.
				rec.Effect = store.WriteID()
				var err error
				app, err = p.cfg.Store.AppendUsage(ctx, sum, rec)
				return err
			})
			if err != nil {
				return res, err
			}
			sum = app.Summary
			res.Inserted = app.New
			res.Recorded, res.Usage = true, u
			p.records.Add(1)
			// The seed's loop writes its checkpoint all the same, late or not.
			p.noteLate([]Record{r}, []bool{true})
			if p.crashAt(lesson.AfterDelta, r) {
				return res, ErrCrashed
			}
		}
	}
	cp := store.Checkpoint{SensorID: m.SensorID, Message: m, Partition: r.Partition, Offset: r.Offset, Summary: sum}
	err = p.retry(ctx, "save checkpoint", func(ctx context.Context) error {
		return p.cfg.Store.SaveCheckpoint(ctx, cp)
	})
	if err != nil {
		return res, err
	}
	p.checkpoints[m.SensorID] = cp
	p.processed.Add(1)
	if p.crashAt(lesson.AfterCheckpoint, r) {
		return res, ErrCrashed
	}
	return res, nil
}
