package producer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// publisher owns the librdkafka producer and its delivery reports.
type publisher struct {
	cfg Config
	em  *status.Emitter
	log *slog.Logger

	mu sync.Mutex
	p  *kafka.Producer
	wg sync.WaitGroup

	// enqueued counts messages librdkafka accepted; each one ends as
	// delivered or failed (a delivery report), unless its producer is
	// replaced after a fatal error.
	enqueued  atomic.Int64
	delivered atomic.Int64
	// injected counts malformed records delivered on purpose; they have
	// delivery channels of their own, so delivered leaves them out.
	injected atomic.Int64
	failed   atomic.Int64 // delivery reports with an error, and enqueue failures
	reported atomic.Int64 // delivery reports handled (delivered or failed)
	fatal    chan error
	// settledAt: unix nanos of the last Progress sent because every
	// enqueued record had its report (see settled).
	settledAt atomic.Int64

	down      atomic.Bool
	lastRetry atomic.Int64 // unix nanos of the last Retrying event
	// lastErr: the latest produce error librdkafka retried (nil: none),
	// read from its logs when errLogs.
	errLogs bool
	lastErr atomic.Pointer[produceErr]

	// acks: the setting of the producer in p (changed only by the
	// publishing loop, between two producers); acked: the log of what was
	// acknowledged (nil: none).
	acks  lesson.Acks
	acked *ackedLog
	// lastAck: unix nanos of the latest acknowledgement (of the start
	// before the first).
	lastAck atomic.Int64
}

// newPublisher starts a publisher; errLogs: read the produce errors
// librdkafka retries (kafkacfg.ProduceErrorLogs) for the Blocked event,
// which a bulk preload does without.
func newPublisher(cfg Config, em *status.Emitter, log *slog.Logger, errLogs bool) (*publisher, error) {
	pub := &publisher{cfg: cfg, em: em, log: log, fatal: make(chan error, 1), errLogs: errLogs, acks: cfg.Acks}
	if pub.acks == "" {
		pub.acks = lesson.AcksAll
	}
	pub.lastAck.Store(time.Now().UnixNano())
	if cfg.AckedLog != "" {
		a, err := openAckedLog(cfg.AckedLog)
		if err != nil {
			return nil, fmt.Errorf("producer: %w", err)
		}
		pub.acked = a
	}
	if err := pub.start(); err != nil {
		_ = pub.acked.close()
		return nil, err
	}
	return pub, nil
}

func (pub *publisher) start() error {
	cfg := kafkacfg.ProducerAcks(pub.cfg.Brokers, pub.acks)
	if pub.errLogs {
		cfg = kafkacfg.ProduceErrorLogs(cfg)
	}
	p, err := kafka.NewProducer(cfg)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	pub.mu.Lock()
	pub.p = p
	pub.mu.Unlock()
	pub.wg.Add(1)
	go pub.reports(p, pub.acks)
	if pub.errLogs {
		go pub.logs(p.Logs())
	}
	return nil
}

// produceErr is a produce error librdkafka retried, and when it was seen.
type produceErr struct {
	text string
	at   time.Time
}

// logs reads librdkafka's log lines until the producer is closed: the
// produce errors it retries silently are kept for the Blocked event (see
// kafkacfg.ProduceErrorLogs), its other debug lines dropped, the rest
// logged on stderr as before.
func (pub *publisher) logs(ch chan kafka.LogEvent) {
	for e := range ch {
		if text, ok := kafkacfg.ProduceError(e.Message); ok {
			pub.lastErr.Store(&produceErr{text: text, at: time.Now()})
			continue
		}
		if e.Level >= 7 {
			continue
		}
		level := slog.LevelInfo
		switch {
		case e.Level <= 3:
			level = slog.LevelError
		case e.Level == 4:
			level = slog.LevelWarn
		}
		pub.log.Log(context.Background(), level, "librdkafka: "+e.Message, "tag", e.Tag)
	}
}

// recoverFrom replaces the producer after a fatal error: an idempotent
// producer cannot continue (e.g. after a sequence gap), a new one gets a
// new producer id. The board shows the process retrying until the new
// producer's first delivery (or, paused, a metadata answer) reports it
// connected again: without marking it down here, nothing would, and a
// producer publishing fine would stay "retrying" on screen.
func (pub *publisher) recoverFrom(err error) error {
	pub.log.Error("fatal producer error; starting a new producer", "err", err)
	pub.down.Store(true)
	pub.em.Emit(status.Event{Type: status.Recovering, Endpoint: "kafka", Addr: pub.cfg.Brokers,
		Error: err.Error(), Reason: "starting a new producer"})
	return pub.restart()
}

func (pub *publisher) restart() error {
	pub.stopProducer()
	// Messages the old producer never reported on are gone.
	pub.enqueued.Store(pub.reported.Load())
	return pub.start()
}

func (pub *publisher) close() {
	pub.stopProducer()
	if err := pub.acked.close(); err != nil {
		pub.log.Warn("acknowledged-records log not written", "path", pub.cfg.AckedLog, "err", err)
	}
}

// stopProducer closes the librdkafka producer and waits for its last
// delivery reports.
func (pub *publisher) stopProducer() {
	pub.mu.Lock()
	p := pub.p
	pub.p = nil
	pub.mu.Unlock()
	if p != nil {
		p.Close() // closes Events(), ending reports
	}
	pub.wg.Wait()
}

func (pub *publisher) produce(m telemetry.Message) {
	value, err := telemetry.Encode(m)
	if err != nil { // a simulator bug, not bad luck
		pub.failed.Add(1)
		pub.log.Error("cannot encode generated message", "sensor", m.SensorID, "err", err)
		return
	}
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	topic := pub.cfg.Topic
	err = p.Produce(&kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            []byte(m.SensorID),
		Value:          value,
		Opaque:         m.Timestamp,
	}, nil)
	if err == nil {
		pub.enqueued.Add(1)
	}
	if err != nil {
		// Typically a full local queue while the broker is away: the
		// message is lost, but odometers are cumulative, so the next one
		// carries the usage on.
		n := pub.failed.Add(1)
		if n == 1 || n%100 == 0 {
			pub.log.Warn("cannot enqueue message", "sensor", m.SensorID, "failed_total", n, "err", err)
		}
	}
}

// flush waits up to timeout (or until ctx ends) until every enqueued
// message has its delivery report counted, and returns how many have not.
func (pub *publisher) flush(ctx context.Context, timeout time.Duration) int {
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		// Flush returns once librdkafka handed every report to the events
		// channel; the reports goroutine may still be counting the last ones.
		if p.Flush(100) == 0 && pub.reported.Load() >= pub.enqueued.Load() {
			return 0
		}
	}
	return int(pub.enqueued.Load() - pub.reported.Load())
}

// sent is every record the broker acknowledged from this producer, the
// telemetry and the malformed records injected on purpose alike: what the
// topic grew by, and what the dashboard shows as sent.
func (pub *publisher) sent() int64 { return pub.delivered.Load() + pub.injected.Load() }

// settled reports the delivered count as soon as a batch is acknowledged
// whole, at most every settledEvery: the 1 s progress tick fires in step
// with the send tick, before the batch it just sent is acknowledged, so by
// itself it would show "sent" one batch behind the topic.
func (pub *publisher) settled() {
	if pub.reported.Load() != pub.enqueued.Load() {
		return
	}
	now := time.Now().UnixNano()
	last := pub.settledAt.Load()
	if now-last < int64(settledEvery) || !pub.settledAt.CompareAndSwap(last, now) {
		return
	}
	pub.em.Emit(status.Event{Type: status.Progress, Produced: pub.sent(), Sensors: pub.cfg.Sensors})
}

func (pub *publisher) reports(p *kafka.Producer, acks lesson.Acks) {
	defer pub.wg.Done()
	for ev := range p.Events() {
		switch e := ev.(type) {
		case *kafka.Message:
			if err := e.TopicPartition.Error; err != nil {
				n := pub.failed.Add(1)
				pub.reported.Add(1) // after the counter: flush reads them in this order
				pub.log.Warn("delivery failed", "sensor", string(e.Key), "failed_total", n, "err", err)
				pub.unreachable(err)
				continue
			}
			// Everything a delivery does is done before it counts as
			// reported: flush returns on that count, and a report still
			// being handled after it would clear a later recoverFrom's down.
			pub.delivered.Add(1)
			pub.lastAck.Store(time.Now().UnixNano())
			offset := int64(e.TopicPartition.Offset)
			if !acks.Confirmed() {
				offset = UnknownOffset
			}
			if ts, ok := e.Opaque.(int64); ok {
				pub.acked.add(e.TopicPartition.Partition, offset, e.Key, ts, acks)
			}
			if pub.cfg.LogAcks {
				pub.log.Info("acked", "sensor", string(e.Key), "ts", e.Opaque,
					"partition", e.TopicPartition.Partition, "offset", offset)
			}
			if pub.down.CompareAndSwap(true, false) {
				pub.log.Info("broker reachable again", "brokers", pub.cfg.Brokers)
				pub.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: pub.cfg.Brokers})
			}
			pub.reported.Add(1)
			pub.settled()
		case kafka.Error:
			if e.IsFatal() {
				select {
				case pub.fatal <- e:
				default:
				}
				continue
			}
			pub.log.Warn("kafka client error", "err", e)
			pub.unreachable(e)
		}
	}
}

// checkBack reports the broker reachable again while no delivery would
// say so (paused, or nothing in flight): a metadata answer is enough.
func (pub *publisher) checkBack() {
	if !pub.down.Load() {
		return
	}
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	if _, err := p.GetMetadata(&pub.cfg.Topic, false, 500); err != nil {
		return
	}
	if pub.down.CompareAndSwap(true, false) {
		pub.log.Info("broker reachable again", "brokers", pub.cfg.Brokers)
		pub.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: pub.cfg.Brokers})
	}
}

// unreachable reports connectivity errors as Retrying: at the first one and
// then at most every few seconds while they last. librdkafka keeps retrying
// by itself.
func (pub *publisher) unreachable(err error) {
	var kerr kafka.Error
	if !errors.As(err, &kerr) {
		return
	}
	switch kerr.Code() {
	case kafka.ErrAllBrokersDown, kafka.ErrTransport, kafka.ErrResolve, kafka.ErrMsgTimedOut, kafka.ErrTimedOut:
	default:
		return
	}
	now := time.Now().UnixNano()
	if !pub.down.Swap(true) || now-pub.lastRetry.Load() > int64(5*time.Second) {
		pub.lastRetry.Store(now)
		pub.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: pub.cfg.Brokers, Error: kerr.Error()})
	}
}
