package usage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

func randHex8() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// progressEvery is the period of Progress events.
const progressEvery = time.Second

// Run runs consumer-usage until ctx ends, then shuts down cleanly and
// returns nil. It returns an error only for what retrying cannot fix (a
// bad URI, a busy HTTP address, a fatal client error).
func Run(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) error {
	group := cfg.ResolveGroup()
	em.Emit(status.Event{Type: status.Started, PID: os.Getpid(), Mode: string(cfg.Mode), Reset: string(cfg.Reset), GroupID: group})
	log.Info("starting", "mode", cfg.Mode, "reset", cfg.Reset, "group", group, "topic", cfg.Conn.Topic)

	arm := &CrashArm{}
	if cfg.CrashPoint != "" {
		if err := arm.Arm(cfg.CrashPoint, cfg.CrashAfter); err != nil {
			return err
		}
		log.Warn("crash point armed", "point", cfg.CrashPoint, "after", cfg.CrashAfter)
		em.Emit(status.Event{Type: status.CrashPointArmed, Point: string(cfg.CrashPoint), After: cfg.CrashAfter})
	}

	st, err := store.Connect(ctx, cfg.Conn.Mongo)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = st.Close(closeCtx)
	}()
	storeAddr := uriHost(cfg.Conn.Mongo)
	tracker := health.NewTracker(cfg.StuckAfter)
	delay := &EffectDelay{}
	delay.Set(cfg.EffectDelay)
	if cfg.EffectDelay > 0 {
		em.Emit(status.Event{Type: status.EffectDelay, Millis: cfg.EffectDelay.Milliseconds()})
	}
	proc := NewProcessor(ProcessorConfig{
		Store: st, Topic: cfg.Conn.Topic, Mode: cfg.Mode, Crash: arm, EffectDelay: delay,
		Writer: store.Writer(cfg.InstanceID, time.Now()), Emitter: em, Log: log, StoreAddr: storeAddr, SlowAfter: cfg.StoreSlow,
	})

	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		return fmt.Errorf("http: %w", cli.ListenHint("--http", err))
	}
	srv := &http.Server{
		Handler:           newHandler(cfg.Mode, cfg.Reset, group, proc.Stats, tracker, arm, delay, em, log),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
	}()
	em.Emit(status.Event{Type: status.Listening, Endpoint: "http", Addr: ln.Addr().String()})
	log.Info("http listening", "addr", ln.Addr().String())

	if !waitStore(ctx, st, storeAddr, em, log) {
		return stopping(em, log, "signal")
	}
	// The seed's load_state: the checkpoints every delta is computed from.
	if err := proc.Load(ctx); err != nil {
		return stopping(em, log, "signal")
	}

	// Store trouble reaches the current consumer handle's loop (the
	// processor's slow-call timer runs on its own goroutine), and so does
	// the question whether a partition is still owned.
	var loop atomic.Pointer[kafkaLoop]
	proc.cfg.Owned = func(p int32) bool {
		k := loop.Load()
		return k == nil || k.owns(p)
	}
	proc.cfg.OnStoreTrouble = func(reason string) {
		if k := loop.Load(); k != nil {
			k.storeTrouble(reason)
		}
	}
	for incarnation := 1; ; incarnation++ {
		consumer, err := kafka.NewConsumer(kafkacfg.Usage(cfg.Conn.Brokers, group, cfg.Reset, cfg.MemberInstance()))
		if err != nil {
			return fmt.Errorf("kafka consumer: %w", err)
		}
		k := &kafkaLoop{
			ctx: ctx, cfg: cfg, em: em, log: log, consumer: consumer, proc: proc,
			positions: map[int32]int64{}, firstAssign: incarnation == 1, health: tracker, st: st,
		}
		loop.Store(k)
		err = k.run()
		var fenced errFenced
		if !errors.As(err, &fenced) {
			return err
		}
		// Fencing is fatal to a librdkafka handle but not to the group
		// membership: a new handle with the same group.instance.id takes
		// the member's place and resumes at the committed offsets. Exiting
		// instead would leave consumer-usage down after every broker
		// restart that outlasts its session, for no fault of its own.
		em.Emit(status.Event{Type: status.Recovering, Endpoint: "kafka", Addr: cfg.Conn.Brokers,
			Error: "fenced by its group after the broker outage (static member rejoined)", Reason: "re-creating its Kafka consumer"})
		log.Warn("fenced; re-creating the Kafka consumer", "error", fenced.err)
		if cfg.Mode == lesson.Guarded {
			// What the fenced handle made durable is the only truth now.
			if err := proc.Load(ctx); err != nil {
				return stopping(em, log, "signal")
			}
		}
	}
}

// errFenced ends one consumer handle that the group fenced (a static
// member replaced by its own rejoin after a broker outage); Run re-creates it.
type errFenced struct{ err kafka.Error }

func (e errFenced) Error() string { return "fenced: " + e.err.Error() }

// closeTimeout bounds Close: after a fatal error librdkafka's Close can
// block for good, and a stuck Close would keep a dead consumer looking
// alive.
const closeTimeout = 5 * time.Second

func stopping(em *status.Emitter, log *slog.Logger, reason string) error {
	em.Emit(status.Event{Type: status.Stopping, Reason: reason})
	log.Info("stopping", "reason", reason)
	return nil
}

// uriHost is the host part of a mongodb URI, without credentials.
func uriHost(uri string) string {
	if u, err := url.Parse(uri); err == nil {
		return u.Host
	}
	return ""
}

// waitStore pings the store until it answers; false means ctx ended first.
func waitStore(ctx context.Context, st *store.Store, addr string, em *status.Emitter, log *slog.Logger) bool {
	delay := 500 * time.Millisecond
	for {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := st.Ping(pingCtx)
		cancel()
		if err == nil {
			em.Emit(status.Event{Type: status.Connected, Endpoint: "mongo", Addr: addr})
			log.Info("store connected", "addr", addr)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		em.Emit(status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: addr, Error: err.Error()})
		log.Warn("store unreachable; retrying", "addr", addr, "error", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

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

	// st is pinged while backpressure lasts; bp is shared with the
	// processor's slow-call timer (another goroutine).
	st *store.Store
	bp backpressure
}

// backpressure is consumer-usage's "store down or slow" state.
type backpressure struct {
	mu     sync.Mutex
	since  time.Time // zero: not in backpressure
	reason string
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

// Backpressure. While the store is down or slow, consumer-usage takes no
// new message: the batch in hand (one at a time, processing is
// sequential) keeps being retried inside HandleBatch, and as soon as a store
// call fails or has not answered within --store-slow, every assigned
// partition is paused, so librdkafka stops fetching and Poll hands out
// nothing new. Between pings the loop keeps polling (rebalances, errors,
// max.poll.interval.ms); only the batch in hand blocks polling while
// its writes are retried. The partitions are resumed, from the position
// after the last message handled, once a ping answers within
// --store-slow.

// storeTrouble enters (or re-describes) backpressure; any goroutine.
func (k *kafkaLoop) storeTrouble(reason string) {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	now := time.Now()
	if !k.bp.since.IsZero() && troubleKind(k.bp.reason) == troubleKind(reason) {
		return
	}
	if k.bp.since.IsZero() {
		k.bp.since = now
	}
	k.bp.reason = reason
	parts := k.pauseAll()
	k.em.Emit(status.Event{Type: status.Backpressure, Reason: reason, Partitions: parts,
		Millis: now.Sub(k.bp.since).Milliseconds()})
	k.log.Warn("backpressure: not taking new messages", "reason", reason, "paused", parts)
}

// troubleKind is "store unreachable" or "store slow".
func troubleKind(reason string) string {
	kind, _, _ := strings.Cut(reason, ":")
	return kind
}

func (k *kafkaLoop) inBackpressure() bool {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	return !k.bp.since.IsZero()
}

// pauseAll pauses every assigned partition (again: a rebalance may have
// assigned new ones) and returns them.
func (k *kafkaLoop) pauseAll() []int32 {
	tps, err := k.consumer.Assignment()
	if err != nil || len(tps) == 0 {
		return nil
	}
	if err := k.consumer.Pause(tps); err != nil {
		k.log.Warn("pause partitions", "error", err)
	}
	return partitionIDs(tps)
}

// pingTimeout bounds one health ping while backpressure lasts; the driver
// gives up on an unreachable server after 3 s (store.Connect).
const pingTimeout = 5 * time.Second

// awaitStore keeps the partitions paused and pings the store until it
// answers within --store-slow, then resumes them.
func (k *kafkaLoop) awaitStore(tick *time.Ticker) error {
	limit := k.proc.cfg.SlowAfter
	next := time.Now()
	for k.ctx.Err() == nil {
		if !time.Now().Before(next) {
			ctx, cancel := context.WithTimeout(k.ctx, pingTimeout)
			began := time.Now()
			err := k.st.Ping(ctx)
			took := time.Since(began)
			cancel()
			switch {
			case k.ctx.Err() != nil:
				return nil
			case err == nil && took <= limit:
				k.endBackpressure()
				return nil
			case errors.Is(err, context.DeadlineExceeded):
				k.storeTrouble(fmt.Sprintf("store slow: ping not answered within %s", pingTimeout))
			case err != nil:
				k.storeTrouble("store unreachable: ping: " + err.Error())
			default:
				k.storeTrouble(fmt.Sprintf("store slow: ping took %s, limit %s", took.Round(time.Millisecond), limit))
			}
			k.pauseAll()
			next = time.Now().Add(500 * time.Millisecond)
		}
		if err := k.pollOnce(tick); err != nil {
			return err
		}
	}
	return nil
}

// pausedAsBackpressureSays pauses newly assigned partitions while
// backpressure lasts and resumes them otherwise. librdkafka keeps a
// partition's pause across a revoke and a new assignment, so a
// backpressure that ended while the partitions were being reassigned would
// otherwise leave them paused for good.
func (k *kafkaLoop) pausedAsBackpressureSays(tps []kafka.TopicPartition) {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	if len(tps) == 0 {
		return
	}
	if !k.bp.since.IsZero() {
		if err := k.consumer.Pause(tps); err != nil {
			k.log.Warn("pause partitions", "error", err)
		}
		return
	}
	if err := k.consumer.Resume(tps); err != nil {
		k.log.Warn("resume partitions", "error", err)
	}
}

func (k *kafkaLoop) endBackpressure() {
	k.bp.mu.Lock()
	defer k.bp.mu.Unlock()
	if k.bp.since.IsZero() {
		return
	}
	took := time.Since(k.bp.since)
	k.bp.since, k.bp.reason = time.Time{}, ""
	if tps, err := k.consumer.Assignment(); err == nil && len(tps) > 0 {
		if err := k.consumer.Resume(tps); err != nil {
			k.log.Warn("resume partitions", "error", err)
		}
	}
	k.em.Emit(status.Event{Type: status.BackpressureEnded, Millis: took.Milliseconds()})
	k.log.Info("backpressure ended: taking messages again", "lasted", took.Round(time.Millisecond))
}

// waitBroker asks for the topic's metadata until the broker answers and
// knows the topic; false means ctx ended first.
func (k *kafkaLoop) waitBroker() bool {
	topic := k.cfg.Conn.Topic
	for {
		err := k.topicReachable(3000)
		if err == nil {
			k.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers})
			k.log.Info("broker connected", "brokers", k.cfg.Conn.Brokers, "topic", topic)
			return true
		}
		if k.ctx.Err() != nil {
			return false
		}
		k.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers, Error: err.Error()})
		k.log.Warn("broker unreachable; retrying", "brokers", k.cfg.Conn.Brokers, "error", err)
		select {
		case <-k.ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

func (k *kafkaLoop) topicReachable(timeoutMs int) error {
	topic := k.cfg.Conn.Topic
	md, err := k.consumer.GetMetadata(&topic, false, timeoutMs)
	if err != nil {
		return err
	}
	t, ok := md.Topics[topic]
	switch {
	case !ok:
		return fmt.Errorf("topic %s not in metadata", topic)
	case t.Error.Code() != kafka.ErrNoError:
		return fmt.Errorf("topic %s: %w", topic, t.Error)
	case len(t.Partitions) == 0:
		return fmt.Errorf("topic %s has no partitions", topic)
	}
	return nil
}

// finishGrace is how long a stop lets the message in hand finish its
// writes; the dashboard's supervisor SIGKILLs 6 s after its SIGTERM.
const finishGrace = 3 * time.Second

// finishing is the context a message is applied in: a stop does not cancel
// it at once but finishGrace later. A write cancelled in flight may still
// land on the server without the writes that follow it, so a graceful stop
// that cut a message short would leave half of its effect behind (a guarded
// usage record without its checkpoint, which the next consumer applies
// again).
func finishing(stop context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(stop))
	unregister := context.AfterFunc(stop, func() { time.AfterFunc(grace, cancel) })
	return ctx, func() { unregister(); cancel() }
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

// inFlight is a batch whose store writes run on their own goroutine while
// the loop keeps polling: a rebalance is served while a write is held or
// slow, as a real consumer's is, so a partition can be revoked with its
// write still in flight.
type inFlight struct {
	done   chan batchResult
	result *batchResult
	mu     sync.Mutex
	// revoked: partitions revoked while the batch was in flight; their
	// writes complete late and their offsets are not stored.
	revoked map[int32]bool
	// parts: messages of the batch per partition.
	parts map[int32]int
}

type batchResult struct {
	results []Result
	err     error
}

// revoke marks parts lost and returns how many of the batch's messages
// are in them (0 once the batch is done: nothing is in flight then).
func (f *inFlight) revoke(parts []int32) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.result != nil {
		return 0
	}
	var n int64
	for _, p := range parts {
		f.revoked[p] = true
		n += int64(f.parts[p])
	}
	return n
}

func (f *inFlight) lost(p int32) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.revoked[p]
}

// owns is the processor's Owned: false for a partition revoked while the
// current batch was in flight.
func (k *kafkaLoop) owns(p int32) bool {
	f := k.flight
	return f == nil || !f.lost(p)
}

// launch starts HandleBatch on its own goroutine.
func (k *kafkaLoop) launch(ctx context.Context, recs []Record) *inFlight {
	f := &inFlight{done: make(chan batchResult, 1), revoked: map[int32]bool{}, parts: map[int32]int{}}
	for _, r := range recs {
		f.parts[r.Partition]++
	}
	k.flight = f
	go func() {
		results, err := k.proc.HandleBatch(ctx, recs)
		f.done <- batchResult{results: results, err: err}
	}()
	return f
}

// inFlightPoll is how often the loop polls while a batch is in flight:
// rebalance callbacks are served within it.
const inFlightPoll = 50 * time.Millisecond

// await waits for f, polling meanwhile: rebalance callbacks run (a revoke
// marks f's partitions lost; an assign waits for f first, see rebalance),
// messages are held for the next batch, errors are handled (a fatal one is
// returned once f is done). Nothing of the processor is touched here while
// f runs.
func (k *kafkaLoop) await(f *inFlight) batchResult {
	t := time.NewTimer(inFlightPoll)
	defer t.Stop()
	for f.result == nil {
		select {
		case r := <-f.done:
			f.result = &r
			continue
		case <-t.C:
			t.Reset(inFlightPoll)
		}
		switch e := k.consumer.Poll(0).(type) {
		case *kafka.Message:
			k.held = append(k.held, e)
		case kafka.Error:
			if err := k.kafkaError(e); err != nil && k.fatal == nil {
				k.fatal = err
			}
		case kafka.OffsetsCommitted:
			k.committedEvent(e)
		}
	}
	k.flight = nil
	return *f.result
}

// settle waits for the batch in flight, if any, without polling (an
// assignment reloads the processor's checkpoints, which the batch's
// goroutine is still using) and returns how long it waited.
func (k *kafkaLoop) settle() time.Duration {
	f := k.flight
	if f == nil || f.result != nil {
		return 0
	}
	began := time.Now()
	r := <-f.done
	f.result = &r
	return time.Since(began)
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
	if !k.guarded() {
		return false
	}
	if low, _, err := k.consumer.QueryWatermarkOffsets(*tp.Topic, tp.Partition, 2000); err == nil && want < low {
		k.log.Error("skipped offsets are gone from the log (retention); going on without them",
			"partition", tp.Partition, "from", want, "to", got, "log_start", low)
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

func (k *kafkaLoop) kafkaError(e kafka.Error) error {
	if e.IsFatal() {
		if e.Code() == kafka.ErrFencedInstanceID {
			return errFenced{err: e}
		}
		return fmt.Errorf("kafka: %w", e)
	}
	switch e.Code() {
	case kafka.ErrAllBrokersDown, kafka.ErrTransport, kafka.ErrResolve:
		k.brokerDown = true
		if time.Since(k.lastRetrying) >= 2*time.Second {
			k.lastRetrying = time.Now()
			k.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers, Error: e.Error()})
			k.log.Warn("broker unreachable; librdkafka keeps retrying", "error", e)
		}
	default:
		k.log.Warn("kafka", "error", e, "code", e.Code())
	}
	return nil
}

// brokerBack reports the broker reachable again after Retrying.
func (k *kafkaLoop) brokerBack() {
	if k.brokerDown {
		k.brokerDown = false
		k.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: k.cfg.Conn.Brokers})
		k.log.Info("broker reachable again")
	}
}

// rebalance is called by librdkafka inside Poll (and Close). An assignment
// is applied here, so its partitions' pause can follow backpressure; a
// revoke's Unassign is left to the Go client, after it returns.
func (k *kafkaLoop) rebalance(c *kafka.Consumer, ev kafka.Event) error {
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		k.brokerBack()
		// The rebalance as this member saw it: from its revoke to this
		// assignment, before any wait of its own below.
		var took time.Duration
		if !k.revokedAt.IsZero() {
			took, k.revokedAt = time.Since(k.revokedAt), time.Time{}
		}
		// A batch still in flight uses the processor: let it finish
		// before the checkpoints are reloaded. Its writes to partitions
		// revoked meanwhile complete late.
		if waited := k.settle(); waited > 0 {
			k.log.Info("assignment waited for the batch in flight", "waited", waited.Round(time.Millisecond))
		}
		parts := partitionIDs(e.Partitions)
		member, generation := groupMember(c)
		k.log.Info("partitions assigned", "partitions", parts, "member", member, "generation", generation,
			"rebalance", took.Round(time.Millisecond))
		if k.guarded() {
			// Another consumer may have owned these partitions and advanced
			// their sensors' checkpoints: start from what is durable.
			if err := k.proc.Load(k.ctx); err != nil {
				k.log.Warn("reload checkpoints on assign", "error", err)
			}
		}
		start, uncommitted := k.startPositions(e.Partitions)
		redelivered := k.redelivered(start)
		if k.guarded() {
			// Guarded mode does not let librdkafka pick where to start: it
			// assigns the offsets it will judge gaps against, so a start
			// the client moved (an offset reset after a broker restart)
			// cannot pass unseen.
			if err := c.Assign(k.explicitStart(e.Partitions, start)); err != nil {
				k.log.Warn("assign at explicit offsets", "error", err)
			}
			k.pinStart(c, start, uncommitted)
		} else if err := c.Assign(e.Partitions); err != nil {
			k.log.Warn("assign", "error", err)
		}
		k.pausedAsBackpressureSays(e.Partitions)
		for p, off := range start {
			k.positions[p] = off
		}
		k.health.Assign(time.Now(), k.positions)
		if redelivered > 0 || k.firstAssign {
			k.log.Info("messages processed before will be delivered again", "count", redelivered, "start", start)
		}
		startAt := make([]status.Position, 0, len(parts))
		for _, p := range parts {
			startAt = append(startAt, status.Position{Partition: p, Offset: start[p], HighWatermark: -1})
		}
		k.em.Emit(status.Event{Type: status.Assigned, Partitions: parts, Redelivered: redelivered, First: k.firstAssign,
			Member: member, Generation: generation, Positions: startAt, Millis: took.Milliseconds()})
		k.firstAssign = false
	case kafka.RevokedPartitions:
		parts := partitionIDs(e.Partitions)
		member, generation := groupMember(c)
		k.revokedAt = time.Now()
		var inFlight int64
		if f := k.flight; f != nil {
			k.proc.Fence(func() { inFlight = f.revoke(parts) })
		}
		k.em.Emit(status.Event{Type: status.Revoked, Partitions: parts, Member: member, Generation: generation, InFlight: inFlight})
		k.log.Info("partitions revoked", "partitions", parts, "lost", c.AssignmentLost(), "member", member,
			"generation", generation, "in_flight", inFlight)
		if !c.AssignmentLost() {
			// Hand over exactly what is done: offsets are stored only once
			// a batch's writes completed, so this is the contiguous
			// completed prefix, never the writes still in flight. (Naive
			// mode commits what its store holds every second anyway.)
			k.commitStored("revoke")
		}
		for _, p := range parts {
			delete(k.positions, p)
		}
		inParts := func(m *kafka.Message) bool { return slices.Contains(parts, m.TopicPartition.Partition) }
		k.batch = slices.DeleteFunc(k.batch, inParts)
		k.held = slices.DeleteFunc(k.held, inParts)
		k.health.Revoke(time.Now(), parts)
	}
	return nil
}

// groupMember is the consumer's group member id and generation, read from
// its group metadata ("", -1 when unknown). librdkafka exposes them only
// serialized (for transactions): "CGMDv2:", the generation as a native
// int32, then the NUL-terminated group id and member id.
func groupMember(c *kafka.Consumer) (member string, generation int32) {
	md, err := c.GetConsumerGroupMetadata()
	if err != nil || md == nil {
		return "", -1
	}
	return parseGroupMetadata(md)
}

// startPositions is where consumption of newly assigned partitions begins:
// the committed offset, else the watermark auto.offset.reset points at,
// else -1 (unknown). In guarded mode it is never past the furthest
// checkpoint of the partition: a commit ahead of every effect would skip
// messages never applied, while starting at the checkpoint only replays
// what the checkpoints and the dead-letter topic already skip.
//
// uncommitted names the partitions the group has no committed offset for
// (nil when the committed offsets could not be read).
func (k *kafkaLoop) startPositions(tps []kafka.TopicPartition) (start map[int32]int64, uncommitted map[int32]bool) {
	out := map[int32]int64{}
	for _, tp := range tps {
		out[tp.Partition] = -1
	}
	if committed := k.committed(tps); committed != nil {
		uncommitted = map[int32]bool{}
		for _, tp := range committed {
			if tp.Error == nil && tp.Offset >= 0 {
				out[tp.Partition] = int64(tp.Offset)
			} else {
				uncommitted[tp.Partition] = true
			}
		}
	}
	if k.guarded() {
		through := k.proc.Through()
		for p, off := range out {
			t, ok := through[p]
			if ok && off < 0 && k.cfg.Reset != lesson.Earliest {
				// Checkpoints but no commit (a crash before the first one):
				// "latest" would jump over every message since the
				// checkpoint without applying it. Earliest re-reads them
				// anyway.
				k.log.Info("no committed offset: starting at the furthest checkpoint", "partition", p, "through", t)
				out[p] = t
				continue
			}
			if ok && off > t {
				k.log.Warn("committed offset ahead of the furthest checkpoint: starting at the checkpoint",
					"partition", p, "committed", off, "through", t, "ahead", off-t)
				out[p] = t
			}
		}
	}
	for p, off := range out {
		if off >= 0 {
			continue
		}
		low, high, err := k.consumer.QueryWatermarkOffsets(k.cfg.Conn.Topic, p, 1000)
		if err != nil {
			continue
		}
		if k.cfg.Reset == lesson.Earliest {
			out[p] = low
		} else {
			out[p] = high
		}
	}
	return out, uncommitted
}

// pinStart commits the start of every assigned partition the group has no
// commit for. "latest" is where the group first started, not wherever the
// end is at each start: without the pin, an incarnation killed before its
// first commit would make the next one start at a later end and never read
// what came in between (poison records among them would never reach the
// dead-letter topic). Committing the start claims
// nothing processed: it is the next offset to read.
func (k *kafkaLoop) pinStart(c *kafka.Consumer, start map[int32]int64, uncommitted map[int32]bool) {
	var pin []kafka.TopicPartition
	for p := range uncommitted {
		if off, ok := start[p]; ok && off >= 0 {
			pin = append(pin, kafka.TopicPartition{Topic: &k.cfg.Conn.Topic, Partition: p, Offset: kafka.Offset(off)})
		}
	}
	if len(pin) == 0 {
		return
	}
	if _, err := c.CommitOffsets(pin); err != nil {
		k.log.Warn("no committed offset: pinning the start failed", "error", err)
		return
	}
	k.log.Info("no committed offset: start pinned by a commit", "start", start)
}

// committedAttempts bounds how long an assignment waits for the committed
// offsets (each attempt up to 2 s): right after a broker restart the
// coordinator may still be loading them.
const committedAttempts = 5

// committed asks the group coordinator for the committed offsets of tps,
// retrying while it does not answer.
func (k *kafkaLoop) committed(tps []kafka.TopicPartition) []kafka.TopicPartition {
	for attempt := 1; ; attempt++ {
		committed, err := k.consumer.Committed(tps, 2000)
		if err == nil {
			return committed
		}
		if attempt == committedAttempts || k.ctx.Err() != nil {
			k.log.Warn("committed offsets unknown: the start is the client's", "error", err, "attempts", attempt)
			return nil
		}
		k.log.Info("committed offsets not answered; asking again", "error", err, "attempt", attempt)
		select {
		case <-k.ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// explicitStart is tps with the offsets of start where known; unknown
// ones (-1) are left to the client (auto.offset.reset).
func (k *kafkaLoop) explicitStart(tps []kafka.TopicPartition, start map[int32]int64) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = tp
		if off := start[tp.Partition]; off >= 0 {
			out[i].Offset = kafka.Offset(off)
		}
	}
	return out
}

// redelivered counts the messages this consumer will be delivered again:
// per partition, those between where consumption starts (the committed
// offset) and the furthest checkpoint (what was processed before, by this
// process or an earlier one). 0 after a graceful stop, which committed
// exactly what was processed; after a kill -9, what was processed since
// the last auto commit.
func (k *kafkaLoop) redelivered(start map[int32]int64) int64 {
	through := k.proc.Through()
	var n int64
	for p, off := range start {
		if off >= 0 && through[p] > off {
			n += through[p] - off
		}
	}
	return n
}

// commitStored commits the offsets stored so far. A commit the group
// rejects because this member lost its partitions is a failure, never
// progress: the next owner starts from the last commit that was accepted
// and replays the rest (guarded: the effects' identities refuse them).
func (k *kafkaLoop) commitStored(why string) {
	_, err := k.consumer.Commit()
	var kerr kafka.Error
	switch {
	case err == nil, errors.As(err, &kerr) && kerr.Code() == kafka.ErrNoOffset:
	case errors.As(err, &kerr) && lostOwnership(kerr.Code()):
		k.commitRejected(why, err)
	default:
		k.log.Warn("commit stored offsets", "when", why, "error", err)
	}
}

// commitRejected reports a commit the group refused for lost ownership.
func (k *kafkaLoop) commitRejected(why string, err error) {
	k.log.Warn("commit rejected: this member no longer owns the partitions; the next owner replays from the last accepted commit",
		"when", why, "error", err)
	k.em.Emit(status.Event{Type: status.CommitRejected, Reason: why, Error: err.Error()})
}

// committedEvent takes librdkafka's report of a commit (the auto commits
// every second): one refused for lost ownership is reported, never taken
// as progress (nothing here reads progress from commits).
func (k *kafkaLoop) committedEvent(e kafka.OffsetsCommitted) {
	var kerr kafka.Error
	if e.Error != nil && errors.As(e.Error, &kerr) && lostOwnership(kerr.Code()) {
		k.commitRejected("auto", e.Error)
	}
}

// lostOwnership: the commit was refused because the member or generation
// it was made under is no longer the group's.
func lostOwnership(code kafka.ErrorCode) bool {
	switch code {
	case kafka.ErrIllegalGeneration, kafka.ErrUnknownMemberID, kafka.ErrRebalanceInProgress, kafka.ErrFencedInstanceID:
		return true
	}
	return false
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
