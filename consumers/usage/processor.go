package usage

import (
	"context"
	"errors"
	"log/slog"
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

func (p *Processor) crashAt(point lesson.CrashPoint, r Record) bool {
	if !p.cfg.Crash.reach(point) {
		return false
	}
	p.log.Warn("crash point reached: killing myself", "point", point, "partition", r.Partition, "offset", r.Offset)
	p.cfg.OnCrash(status.Event{Type: status.CrashPoint, Point: string(point), Partition: r.Partition, Offset: r.Offset})
	return true
}
