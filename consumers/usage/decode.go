package usage

import (
	"context"
	"errors"

	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// decode is the part of both modes before any write: the dead-letter
// check, decoding and telemetry.Check against prev. ok=false: the record
// is invalid (res says why) or forwarding it failed (err).
func (p *Processor) decode(ctx context.Context, r Record, checkpoint func(string) (store.Checkpoint, bool)) (
	m telemetry.Message, prev store.Checkpoint, known, ok bool, res Result, err error) {
	if p.deadLetter != nil {
		if reason, fwd := p.deadLetter.Forwarded(r.Partition, r.Offset); fwd {
			return m, prev, false, false, p.reject(r, errors.New(reason)), nil
		}
	}
	m, err = telemetry.Decode(r.Key, r.Value)
	if err != nil {
		res, err = p.rejectForward(ctx, r, err)
		return m, prev, false, false, res, err
	}
	prev, known = checkpoint(m.SensorID)
	if known && prev.Partition == r.Partition && r.Offset > prev.Offset {
		if _, err := telemetry.CheckAfter(r.Key, r.Value, &prev.Message, r.Offset-prev.Offset); err != nil {
			res, err = p.rejectForward(ctx, r, err)
			return m, prev, known, false, res, err
		}
	}
	return m, prev, known, true, Result{Outcome: Applied}, nil
}

// rejectForward forwards an invalid record to the dead-letter topic, then
// counts it. An error (ctx ended, or a permanent delivery failure) means
// the record is not done: its offset must not be stored.
func (p *Processor) rejectForward(ctx context.Context, r Record, reason error) (Result, error) {
	if p.deadLetter != nil {
		if err := p.deadLetter.Forward(ctx, r, reason.Error()); err != nil {
			return Result{Outcome: Invalid}, err
		}
	}
	return p.reject(r, reason), nil
}

func (p *Processor) reject(r Record, err error) Result {
	p.invalid.Add(1)
	p.log.Warn("invalid message skipped", "partition", r.Partition, "offset", r.Offset, "error", err)
	p.cfg.Emitter.Emit(status.Event{Type: status.InvalidMessage, Partition: r.Partition, Offset: r.Offset, Error: err.Error()})
	return Result{Outcome: Invalid, Reason: err.Error()}
}
