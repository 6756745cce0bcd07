package usage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Store is what the processor needs from internal/store (*store.Store has
// it). It is an interface only so tests can inject failures in front of the
// real store.
type Store interface {
	ResumeCheckpoints(ctx context.Context) (map[string]store.Checkpoint, error)
	SaveCheckpoint(ctx context.Context, cp store.Checkpoint) error
	AppendUsage(ctx context.Context, sum store.Summary, rec store.UsageRecord) (store.Appended, error)
	AppendUsageBatch(ctx context.Context, sums map[string]store.Summary, recs []store.UsageRecord) (store.Batch, error)
}

// DeadLetter is where invalid records go (dlq.go has consumer-usage's, on
// <topic>.dlq); nil in a Processor means nowhere.
type DeadLetter interface {
	// Forwarded reports whether the record at partition/offset is already
	// in the dead-letter topic, and the reason it was forwarded with.
	Forwarded(partition int32, offset int64) (reason string, ok bool)
	// Forward writes the record with its reason and returns once the
	// broker acknowledged it; an error means it is not known to be there.
	Forward(ctx context.Context, r Record, reason string) error
}

// Record is one Kafka message as the processor sees it.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
}

// Outcome says what HandleBatch did with a record.
type Outcome int

const (
	// Applied: the checkpoint was written (with a usage record or without,
	// e.g. the first message of a sensor or an idle machine).
	Applied Outcome = iota
	// Replayed: guarded mode skipped a record at or before the sensor's
	// durable checkpoint: its effect is already in the store.
	Replayed
	// Invalid: bad input, counted and skipped; nothing was written.
	Invalid
)

// Result is what HandleBatch did with one record.
type Result struct {
	Outcome Outcome
	// Recorded: a usage record write was made (and succeeded). In guarded
	// mode Inserted tells whether it was new or a duplicate no-op.
	Recorded bool
	Inserted bool
	Usage    telemetry.Usage
	// Reason an Invalid record was skipped.
	Reason string
}

// ErrCrashed is returned by HandleBatch when an armed crash point fired and the
// crash function returned (only in tests: the real one never returns). The
// caller must then behave as a dead process: write nothing more.
var ErrCrashed = errors.New("usage: crash point reached")

// ProcessorConfig configures a Processor.
type ProcessorConfig struct {
	Store Store
	Topic string
	Mode  lesson.Mode
	// Writer names this process in its usage records (store.Writer).
	Writer string
	// EffectDelay holds every usage write before it is sent (nil: none).
	EffectDelay *EffectDelay
	// Owned reports whether this consumer still owns a partition (nil:
	// always). A usage write that completes for a partition no longer owned
	// is late: guarded mode then writes no checkpoint for it (the next owner
	// does) and the caller stores no offset.
	Owned func(partition int32) bool
	// Crash is the armed crash point, shared with the HTTP server; nil means
	// crash points are never armed.
	Crash *CrashArm
	// OnCrash runs when an armed point fires, with the CrashPoint event. The
	// default announces it and SIGKILLs the process.
	OnCrash func(status.Event)
	// Emitter and Log report invalid input and store retries (both may be nil).
	Emitter *status.Emitter
	Log     *slog.Logger
	// StoreAddr names the store in Retrying events.
	StoreAddr string
	// Store retries back off from MinBackoff to MaxBackoff (defaults 100 ms, 2 s).
	MinBackoff, MaxBackoff time.Duration
	// OpTimeout bounds one store call (default 10 s).
	OpTimeout time.Duration
	// SlowAfter is when a store call counts as slow (default 1 s).
	SlowAfter time.Duration
	// OnStoreTrouble, when set, is called as soon as a store call fails
	// (reason "store unreachable: ...") or has not answered within
	// SlowAfter ("store slow: ..."), possibly from another goroutine:
	// consumer-usage then stops taking new messages (backpressure).
	OnStoreTrouble func(reason string)
}

// Processor is consumer-usage's per-message logic, without Kafka: the caller
// feeds it records of the topic in partition order and, in guarded mode,
// stores the offset of a record only after HandleBatch returned nil for it.
//
// HandleBatch and Load must be called from one goroutine; Stats may be called
// from any.
type Processor struct {
	cfg ProcessorConfig
	log *slog.Logger
	// checkpoints is the in-memory copy of the durable checkpoints (the
	// seed's last_state): what the next delta of each sensor is computed from.
	checkpoints map[string]store.Checkpoint

	processed   atomic.Int64
	invalid     atomic.Int64
	replayed    atomic.Int64
	records     atomic.Int64
	storeErrors atomic.Int64
	prevented   atomic.Int64
	late        atomic.Int64

	deadLetter DeadLetter
	// fence orders checkpoint writes with revokes (Fence).
	fence sync.Mutex
}

// SetDeadLetter makes HandleBatch forward every invalid record to d, once,
// before it returns (call it before the first HandleBatch).
func (p *Processor) SetDeadLetter(d DeadLetter) { p.deadLetter = d }

// NewProcessor returns a processor with no checkpoints: call Load first.
func NewProcessor(cfg ProcessorConfig) *Processor {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(2*time.Second, cfg.MinBackoff)
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 10 * time.Second
	}
	if cfg.SlowAfter <= 0 {
		cfg.SlowAfter = DefaultSlowAfter
	}
	if cfg.OnCrash == nil {
		em := cfg.Emitter
		cfg.OnCrash = func(ev status.Event) { killSelf(em, ev) }
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Processor{cfg: cfg, log: log, checkpoints: map[string]store.Checkpoint{}}
}

// Load replaces the in-memory checkpoints with the durable ones (orphan
// records folded into their summaries, see store.ResumeCheckpoints),
// retrying while the store is unreachable. Naive mode calls it once at start, as the
// seed does; guarded mode also on every partition assignment, so a
// partition taken over from another consumer starts from what that
// consumer made durable, not from a stale memory of this one.
func (p *Processor) Load(ctx context.Context) error {
	var cps map[string]store.Checkpoint
	err := p.retryWithin(ctx, "load checkpoints", loadTimeout(p.cfg.OpTimeout), func(ctx context.Context) error {
		var err error
		cps, err = p.cfg.Store.ResumeCheckpoints(ctx)
		return err
	})
	if err != nil {
		return err
	}
	p.checkpoints = cps
	return nil
}

// Checkpoint returns the in-memory checkpoint of a sensor.
func (p *Processor) Checkpoint(sensorID string) (store.Checkpoint, bool) {
	cp, ok := p.checkpoints[sensorID]
	return cp, ok
}

// Through is, per partition, the offset after the furthest message this
// consumer knows was processed (in memory: durable ones after Load, plus
// its own since): checkpointed, or with a usage record past its sensor's
// checkpoint (a crash between the delta and the checkpoint: processed
// half-way, and its delta counts again when it is delivered again). A
// message below it was processed before, so a consumer that starts reading
// below it gets those messages delivered again. Invalid messages write
// neither, so trailing invalid ones are not counted.
func (p *Processor) Through() map[int32]int64 {
	out := map[int32]int64{}
	for _, cp := range p.checkpoints {
		out[cp.Partition] = max(out[cp.Partition], cp.Offset+1)
		for _, f := range cp.Summary.Furthest {
			out[f.Partition] = max(out[f.Partition], f.Offset+1)
		}
	}
	return out
}

// Stats are the processor's counters.
type Stats struct {
	// Processed counts records handled and not invalid (applied or replayed).
	Processed int64 `json:"processed"`
	Invalid   int64 `json:"invalid"`
	// Replayed counts records guarded mode skipped as already applied.
	Replayed int64 `json:"replayed"`
	// Records counts usage record writes (in guarded mode, duplicates included).
	Records int64 `json:"records"`
	// StoreErrors counts failed store calls (each was retried).
	StoreErrors int64 `json:"store_errors"`
	// Prevented counts usage records the store refused as second effects
	// (guarded: the message's effect was already recorded).
	Prevented int64 `json:"prevented"`
	// Late counts usage records whose write completed after their
	// partition was revoked from this consumer.
	Late          int64 `json:"late"`
	EffectDelayMs int64 `json:"effect_delay_ms"`
}

// Stats returns the counters; safe from any goroutine.
func (p *Processor) Stats() Stats {
	return Stats{
		Processed:     p.processed.Load(),
		Invalid:       p.invalid.Load(),
		Replayed:      p.replayed.Load(),
		Records:       p.records.Load(),
		StoreErrors:   p.storeErrors.Load(),
		Prevented:     p.prevented.Load(),
		Late:          p.late.Load(),
		EffectDelayMs: p.cfg.EffectDelay.Get().Milliseconds(),
	}
}

// HandleBatch applies records read in this order (partition order within
// each partition) and returns what it did with each. It returns an error
// only when ctx ended while a store write was being retried, or with
// ErrCrashed; either way no record of the batch is done and no offset of
// it may be stored.
//
// Naive mode is the seed's loop, one record at a time, weaknesses
// included: delta against the in-memory checkpoint, insert, then overwrite
// the checkpoint, whatever the record's offset. Guarded mode applies each
// record's effect at most once and in order:
//  1. a record at or before its sensor's checkpoint offset (same
//     partition; the checkpoint as the records before it in the batch
//     leave it) is already applied: skip it;
//  2. the batch's usage records are appended in one ordered insert, each
//     as its sensor's next record and carrying the message's identity
//     (topic/partition/offset) and reading: where a seq is taken by the
//     same identity, writing it again is a no-op, and a record at or
//     before the furthest one folded is not written again;
//  3. one checkpoint per sensor, at its last record of the batch, with
//     the summary of its records through it (single-document upsert by
//     _id; a crash between 2 and 3 leaves orphans that the next writer
//     folds, see store.ResumeCheckpoints);
//  4. the caller stores the offsets only after HandleBatch returned.
//
// Invalid records (telemetry.Check, the product's one rule, with the
// sensor's checkpoint as the last valid message when it is of the same
// partition and before the record) are counted and skipped, and forwarded
// to the dead-letter topic before HandleBatch returns; a record the
// dead-letter topic already holds is counted and skipped without being
// read again (dlq.go explains why this is exactly once).
func (p *Processor) HandleBatch(ctx context.Context, rs []Record) ([]Result, error) {
	_, armed := p.cfg.Crash.State()
	if p.cfg.Mode == lesson.Guarded && !armed {
		return p.handleGuarded(ctx, rs)
	}
	// An armed crash point fires at its after-th message, so with one
	// armed, guarded mode too takes one message at a time: the crash
	// leaves exactly what that message's writes left.
	out := make([]Result, len(rs))
	for i, r := range rs {
		var err error
		if p.cfg.Mode == lesson.Guarded {
			var res []Result
			res, err = p.handleGuarded(ctx, rs[i:i+1])
			out[i] = res[0]
		} else {
			out[i], err = p.handleNaive(ctx, r)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

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

// Fence runs revoke (which makes Owned false for some partitions) while no
// guarded checkpoint write is under way: one attempt at most is waited for
// (a store call, bounded by OpTimeout), not the effect writes in flight.
func (p *Processor) Fence(revoke func()) {
	p.fence.Lock()
	defer p.fence.Unlock()
	revoke()
}

func (p *Processor) owned(partition int32) bool {
	return p.cfg.Owned == nil || p.cfg.Owned(partition)
}

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

func (p *Processor) crashAt(point lesson.CrashPoint, r Record) bool {
	if !p.cfg.Crash.reach(point) {
		return false
	}
	p.log.Warn("crash point reached: killing myself", "point", point, "partition", r.Partition, "offset", r.Offset)
	p.cfg.OnCrash(status.Event{Type: status.CrashPoint, Point: string(point), Partition: r.Partition, Offset: r.Offset})
	return true
}

// DefaultSlowAfter is when a store call counts as slow.
const DefaultSlowAfter = time.Second

// trouble reports store trouble to OnStoreTrouble, if set.
func (p *Processor) trouble(reason string) {
	if p.cfg.OnStoreTrouble != nil {
		p.cfg.OnStoreTrouble(reason)
	}
}

// loadTimeout bounds one Load attempt. A load is many store calls (the
// checkpoints, then one lookup per sensor for records past its checkpoint),
// and on FerretDB v1 a lookup by _id reads the whole usage collection, so a
// load takes seconds on a long history: bounded like one call, it could be
// cut off on a loaded machine and retried from the start for ever.
func loadTimeout(op time.Duration) time.Duration { return max(op, 2*time.Minute) }

// retry runs op until it succeeds or ctx ends. A store that fails never
// makes the consumer move past a record: it waits, reporting Retrying.
func (p *Processor) retry(ctx context.Context, what string, op func(context.Context) error) error {
	return p.retryWithin(ctx, what, p.cfg.OpTimeout, op)
}

// retryWithin is retry with each attempt bounded by timeout.
func (p *Processor) retryWithin(ctx context.Context, what string, timeout time.Duration, op func(context.Context) error) error {
	delay := p.cfg.MinBackoff
	failed := false
	for {
		opCtx, cancel := context.WithTimeout(ctx, timeout)
		// Once a call failed the store is unreachable: a retry waiting for
		// it is not "slow" on top of that.
		slow := time.AfterFunc(p.cfg.SlowAfter, func() {
			if !failed {
				p.trouble(fmt.Sprintf("store slow: %s not answered within %s", what, p.cfg.SlowAfter))
			}
		})
		err := op(opCtx)
		slow.Stop()
		cancel()
		if err == nil {
			if failed {
				p.log.Info("store reachable again", "op", what)
				p.cfg.Emitter.Emit(status.Event{Type: status.Connected, Endpoint: "mongo", Addr: p.cfg.StoreAddr})
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		failed = true
		p.storeErrors.Add(1)
		p.trouble("store unreachable: " + what + ": " + err.Error())
		p.log.Warn("store call failed; retrying", "op", what, "error", err, "backoff", delay)
		p.cfg.Emitter.Emit(status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: p.cfg.StoreAddr,
			Error: what + ": " + err.Error()})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, p.cfg.MaxBackoff)
	}
}
