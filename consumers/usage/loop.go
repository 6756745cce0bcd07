package usage

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// kafkaLoop is the thin Kafka wiring around a Processor. Everything in it
// runs on one goroutine: librdkafka calls the rebalance callback from Poll.
type kafkaLoop struct {
	ctx      context.Context
	cfg      Config
	em       *status.Emitter
	log      *slog.Logger
	consumer *kafka.Consumer
	proc     *Processor
	health   *health.Tracker // fed here, read by GET /healthz

	// positions: next offset to process per assigned partition (taken
	// into the batch in hand counts as processed: the gap check).
	positions map[int32]int64
	// batch: the messages gathered for one HandleBatch.
	batch []*kafka.Message
	// held: messages polled while a batch was in flight, handled next.
	held []*kafka.Message
	// flight is the batch whose writes are running, nil between batches.
	flight *inFlight
	// revokedAt: when the revoke that began the current rebalance came
	// (zero: none pending), for the duration in Assigned.
	revokedAt time.Time
	// fatal: a fatal client error polled while a batch was in flight,
	// returned once it is done.
	fatal error
	// firstAssign: the next assignment is this process's first, whose
	// redelivered count the Assigned event reports.
	firstAssign  bool
	brokerDown   bool
	lastRetrying time.Time
	// commitFailing: the error of the failing auto commits ("" while
	// they succeed), so the log says each change once, not every second.
	commitFailing string

	// st is pinged while backpressure lasts; bp is shared with the
	// processor's slow-call timer (another goroutine).
	st *store.Store
	bp backpressure
}

func (k *kafkaLoop) guarded() bool { return k.cfg.Mode == lesson.Guarded }

func (k *kafkaLoop) run() error {
	defer func() {
		// Both modes store an offset only after its message was handled, so
		// this commits exactly what was processed, never past it.
		k.commitStored("shutdown")
		t := time.Now()
		closed := make(chan error, 1)
		go func() { closed <- k.consumer.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				k.log.Warn("consumer close", "error", err)
			}
			k.log.Info("consumer closed", "took", time.Since(t).Round(time.Millisecond))
		case <-time.After(closeTimeout):
			k.log.Warn("consumer close did not return; abandoning the handle", "after", closeTimeout)
		}
	}()

	if !k.waitBroker() {
		return stopping(k.em, k.log, "signal")
	}
	// Poison records go to <topic>.dlq once (dlq.go): learn what is there
	// before the first record.
	dlq, err := openDeadLetter(k.ctx, k.cfg.Conn.Brokers, k.cfg.Conn.Topic, k.em, k.log)
	if err != nil {
		if k.ctx.Err() != nil {
			return stopping(k.em, k.log, "signal")
		}
		return err
	}
	defer dlq.close()
	k.proc.SetDeadLetter(dlq)
	if err := k.consumer.Subscribe(k.cfg.Conn.Topic, k.rebalance); err != nil {
		return fmt.Errorf("subscribe %s: %w", k.cfg.Conn.Topic, err)
	}

	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for k.ctx.Err() == nil {
		if err := k.pollOnce(tick); err != nil {
			return err
		}
		if k.inBackpressure() {
			if err := k.awaitStore(tick); err != nil {
				return err
			}
		}
	}
	return stopping(k.em, k.log, "signal")
}

// pollOnce polls once and handles what came; messages held while the
// last batch was in flight come first.
func (k *kafkaLoop) pollOnce(tick *time.Ticker) error {
	if k.fatal != nil {
		return k.fatal
	}
	var e kafka.Event
	if len(k.held) > 0 {
		e, k.held = k.held[0], k.held[1:]
	} else {
		e = k.consumer.Poll(100)
		k.health.Polled(time.Now())
	}
	switch e := e.(type) {
	case *kafka.Message:
		// An error while ctx ended is a store write cut short by the
		// shutdown: the batch is not done and no offset of it stored.
		if err := k.handle(k.gather(e)); err != nil && k.ctx.Err() == nil {
			return err
		}
	case kafka.Error:
		if err := k.kafkaError(e); err != nil {
			return err
		}
	case kafka.OffsetsCommitted:
		k.committedEvent(e)
	}
	select {
	case <-tick.C:
		k.progress()
	default:
	}
	return nil
}

// maxBatch bounds what guarded mode applies as one batch: one insert of
// its usage records and one checkpoint per sensor in it. Checkpoints are
// the cost (one write each), so batches grow as large as the backlog
// while catching up, and are single messages when there is none.
const maxBatch = 2000

// gather returns first and, in guarded mode, every message librdkafka
// already holds, up to maxBatch (Poll(0) does not wait for more). A
// rebalance inside those polls drops the gathered messages of the revoked
// partitions (rebalance): they were not applied and go to the next owner.
func (k *kafkaLoop) gather(first *kafka.Message) []*kafka.Message {
	k.batch = append(k.batch[:0], first)
	if !k.guarded() {
		return k.batch
	}
	for len(k.held) > 0 && len(k.batch) < maxBatch {
		k.batch = append(k.batch, k.held[0])
		k.held = k.held[1:]
	}
	for len(k.batch) < maxBatch {
		switch e := k.consumer.Poll(0).(type) {
		case nil:
			return k.batch
		case *kafka.Message:
			k.batch = append(k.batch, e)
		case kafka.Error:
			// Fatal errors come again at the next poll, where they end the
			// loop; here they only end the batch.
			if e.IsFatal() {
				return k.batch
			}
			_ = k.kafkaError(e)
		}
	}
	return k.batch
}

// handle applies ms (in the order polled) and then stores their offsets.
func (k *kafkaLoop) handle(ms []*kafka.Message) error {
	taken := make([]*kafka.Message, 0, len(ms))
	recs := make([]Record, 0, len(ms))
	for _, m := range ms {
		tp := m.TopicPartition
		if tp.Error != nil {
			k.log.Warn("consume error", "partition", tp.Partition, "error", tp.Error)
			continue
		}
		k.brokerBack()
		if k.gap(tp) {
			continue
		}
		if _, ok := k.positions[tp.Partition]; ok {
			k.positions[tp.Partition] = int64(tp.Offset) + 1
		}
		k.health.Received(time.Now(), tp.Partition, int64(tp.Offset))
		taken = append(taken, m)
		recs = append(recs, Record{Partition: tp.Partition, Offset: int64(tp.Offset), Key: m.Key, Value: m.Value})
	}
	if len(recs) == 0 {
		return nil
	}
	ctx, done := finishing(k.ctx, finishGrace)
	defer done()
	f := k.launch(ctx, recs)
	res := k.await(f)
	if res.err != nil {
		if ctx.Err() != nil {
			// The store did not answer within the grace (it is down): no
			// offset of the batch is stored, the next owner redoes it
			// (naive mode then counts again what it had half written).
			k.log.Warn("stopping before these messages were applied", "partition", recs[0].Partition,
				"offset", recs[0].Offset, "messages", len(recs), "mode", k.cfg.Mode)
		}
		return res.err
	}
	// The messages are handled (guarded: their effects are durable): only
	// now may their offsets be stored for commit, and only where this
	// consumer still owns the partition: a revoked one is the next owner's
	// to commit, from where it starts.
	for i, m := range taken {
		tp := m.TopicPartition
		if f.lost(tp.Partition) {
			continue
		}
		if _, err := k.consumer.StoreMessage(m); err != nil {
			k.log.Warn("store offset", "partition", tp.Partition, "offset", tp.Offset, "error", err)
		}
		k.health.Done(time.Now(), tp.Partition, int64(tp.Offset), res.results[i].Reason)
	}
	return k.fatal
}

// gap reports whether m comes after offsets this consumer never saw on its
// partition (the client moved its position past them, e.g. an offset reset
// after a broker restart). Guarded mode promises every message once, so it
// seeks back to the first missing offset and drops m, which comes again;
// as often as it takes while those offsets are still in the log (a broker
// that is still loading can answer out of range more than once), and goes
// on without them only once retention deleted them.
func (k *kafkaLoop) gap(tp kafka.TopicPartition) bool {
	want, ok := k.positions[tp.Partition]
	got := int64(tp.Offset)
	if !ok || want < 0 || got <= want {
		return false
	}
	k.log.Warn("offsets skipped by the client", "partition", tp.Partition, "expected", want, "got", got,
		"skipped", got-want, "seek_back", k.guarded())
	skipped := status.Event{Type: status.Skipped, Partition: tp.Partition, Offset: want, Count: got - want}
	if !k.guarded() {
		k.em.Emit(skipped)
		return false
	}
	if low, _, err := k.consumer.QueryWatermarkOffsets(*tp.Topic, tp.Partition, 2000); err == nil && want < low {
		k.log.Error("skipped offsets are gone from the log (retention); going on without them",
			"partition", tp.Partition, "from", want, "to", got, "log_start", low)
		k.em.Emit(skipped)
		return false
	}
	back := kafka.TopicPartition{Topic: tp.Topic, Partition: tp.Partition, Offset: kafka.Offset(want)}
	if err := k.consumer.Seek(back, 0); err != nil {
		// The message is dropped all the same: the next one shows the gap
		// again and the seek is retried.
		k.log.Warn("seek back to the skipped offsets", "partition", tp.Partition, "offset", want, "error", err)
	}
	return true
}

func (k *kafkaLoop) progress() {
	if k.brokerDown && k.topicReachable(500) == nil {
		k.brokerBack()
	}
	parts := make([]int32, 0, len(k.positions))
	for p := range k.positions {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	positions := make([]status.Position, 0, len(parts))
	for _, p := range parts {
		hw := int64(-1)
		if _, high, err := k.consumer.GetWatermarkOffsets(k.cfg.Conn.Topic, p); err == nil && high >= 0 {
			hw = high
			k.health.Watermark(time.Now(), p, high)
		}
		positions = append(positions, status.Position{Partition: p, Offset: k.positions[p], HighWatermark: hw})
	}
	s := k.proc.Stats()
	k.em.Emit(status.Event{Type: status.Progress, Positions: positions, Processed: s.Processed, Invalid: s.Invalid,
		Prevented: s.Prevented, Late: s.Late})
}

func partitionIDs(tps []kafka.TopicPartition) []int32 {
	out := make([]int32, 0, len(tps))
	for _, tp := range tps {
		out = append(out, tp.Partition)
	}
	slices.Sort(out)
	return out
}
