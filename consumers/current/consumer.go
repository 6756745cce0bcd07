package current

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

const (
	// brokerTimeout bounds each blocking broker call, so SIGTERM is
	// honoured within about that long even while the broker is away.
	brokerTimeout    = 2 * time.Second
	retryEvery       = time.Second
	closeTimeout     = 5 * time.Second
	retryReportEvery = 5 * time.Second
	// Progress is frequent while replaying (the dashboard animates it).
	progressReplaying = 250 * time.Millisecond
	progressCaughtUp  = 500 * time.Millisecond // as often as the dashboard polls watermarks
)

type consumer struct {
	cfg   Config
	em    *status.Emitter
	log   *slog.Logger
	st    *state
	start time.Time
	prep  *preparer
	// lows are the partitions' low watermarks at the start: the history a
	// caught_up counts begins there.
	lows map[int32]int64

	down      bool
	lastRetry time.Time

	// The poll loop hands messages to the applier in batches, so polling
	// (a cgo call and copies per message) and decoding run on separate
	// cores during a replay.
	batches  chan []received
	pending  []received
	inFlight sync.WaitGroup
}

// received is a message and the time its poll returned.
type received struct {
	m  *kafka.Message
	at time.Time
}

// batchSize bounds a batch: it forms only while librdkafka's queue holds a
// backlog (a replay), otherwise each poll's message goes on at once.
const batchSize = 512

// applyBatches applies the batches in order until the channel closes.
func (c *consumer) applyBatches(done chan<- struct{}) {
	defer close(done)
	for b := range c.batches {
		for _, r := range b {
			c.message(r.m, r.at)
		}
		c.inFlight.Done()
	}
}

// send hands the pending messages to the applier.
func (c *consumer) send() {
	if len(c.pending) == 0 {
		return
	}
	c.inFlight.Add(1)
	c.batches <- c.pending
	c.pending = make([]received, 0, batchSize)
}

// drain returns once every message polled so far is applied: a rebalance,
// a revocation or an exit sees the state of everything polled before it.
func (c *consumer) drain() {
	c.send()
	c.inFlight.Wait()
}

func (c *consumer) run(ctx context.Context) error {
	k, err := kafka.NewConsumer(kafkacfg.Current(c.cfg.Brokers, c.cfg.GroupID))
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer func() {
		t := time.Now()
		closed := make(chan error, 1)
		go func() { closed <- k.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				c.log.Warn("consumer close", "err", err)
			}
			c.log.Info("consumer closed", "took", time.Since(t).Round(time.Millisecond))
		case <-time.After(closeTimeout):
			// After a fatal error Close can block for good.
			c.log.Warn("consumer close did not return; abandoning the handle", "after", closeTimeout)
		}
	}()

	if !c.awaitTopic(ctx, k) {
		c.em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
		return nil
	}
	c.rebuild(k)
	c.batches = make(chan []received, 4)
	c.pending = make([]received, 0, batchSize)
	applied := make(chan struct{})
	go c.applyBatches(applied)
	defer func() {
		c.drain()
		close(c.batches)
		<-applied
	}()
	if err := k.Subscribe(c.cfg.Topic, c.rebalance); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}

	nextProgress := time.Now()
	var lastPolled time.Time
	for {
		if ctx.Err() != nil {
			c.em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
			return nil
		}
		timeout := 100
		if len(c.pending) > 0 {
			// An empty queue sends the batch at once.
			timeout = 0
		}
		ev := k.Poll(timeout)
		// One clock read per poll: a replay polls a million times.
		now := time.Now()
		// The health report gives the poll's age in whole milliseconds: a
		// lock per poll would contend with the applier's for nothing.
		if now.Sub(lastPolled) >= time.Millisecond {
			c.st.health.Polled(now)
			lastPolled = now
		}
		switch e := ev.(type) {
		case *kafka.Message:
			c.received(e, now)
		case kafka.Error:
			c.send()
			if err := c.clientError(e); err != nil {
				return err
			}
		default:
			c.send()
		}
		if !now.Before(nextProgress) {
			c.checkBack(k)
			c.refreshWatermarks(k)
			c.em.Emit(c.st.progress())
			c.maybeCaughtUp()
			if c.st.isCaughtUp() {
				nextProgress = now.Add(progressCaughtUp)
			} else {
				nextProgress = now.Add(progressReplaying)
			}
		}
	}
}

// awaitTopic waits until the broker answers with the topic's metadata,
// reporting Retrying meanwhile; false means ctx ended first.
func (c *consumer) awaitTopic(ctx context.Context, k *kafka.Consumer) bool {
	topic := c.cfg.Topic
	for {
		md, err := k.GetMetadata(&topic, false, int(brokerTimeout/time.Millisecond))
		if err == nil {
			tm := md.Topics[topic]
			switch {
			case tm.Error.Code() != kafka.ErrNoError:
				err = fmt.Errorf("topic %s: %w", topic, tm.Error)
			case len(tm.Partitions) == 0:
				err = fmt.Errorf("topic %s has no partitions", topic)
			}
		}
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			c.down = false
			c.log.Info("broker reachable", "brokers", c.cfg.Brokers, "topic", topic, "partitions", len(md.Topics[topic].Partitions))
			c.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: c.cfg.Brokers})
			return true
		}
		c.retrying(err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(retryEvery):
		}
	}
}

func (c *consumer) rebalance(k *kafka.Consumer, ev kafka.Event) error {
	c.drain()
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		start, target := map[int32]int64{}, map[int32]int64{}
		var ids []int32
		parts := append([]kafka.TopicPartition(nil), e.Partitions...)
		for i, tp := range parts {
			ids = append(ids, tp.Partition)
			resume, known := c.st.resumeAt(tp.Partition)
			if known {
				// Reassigned after a broker outage: this group never
				// commits, so without an explicit offset it would replay
				// from earliest.
				parts[i].Offset = kafka.Offset(resume)
			}
			low, high, err := k.QueryWatermarkOffsets(c.cfg.Topic, tp.Partition, int(brokerTimeout/time.Millisecond))
			switch {
			case err != nil:
				// Asked again at the next progress tick.
				c.log.Warn("watermarks unknown at assignment", "partition", tp.Partition, "err", err)
				start[tp.Partition], target[tp.Partition] = max(resume, 0), -1
			case known:
				start[tp.Partition], target[tp.Partition] = resume, high
			default:
				// A fresh group with earliest starts at the low watermark.
				start[tp.Partition], target[tp.Partition] = low, high
			}
		}
		if err := k.Assign(parts); err != nil {
			c.log.Warn("assign", "err", err)
		}
		c.st.assign(start, target)
		c.st.health.Assign(time.Now(), start)
		for p, high := range target {
			c.st.health.Watermark(time.Now(), p, high)
		}
		c.log.Info("partitions assigned", "partitions", ids, "targets", target)
		c.em.Emit(status.Event{Type: status.Assigned, Partitions: ids})
		c.maybeCaughtUp()
	case kafka.RevokedPartitions:
		var ids []int32
		for _, tp := range e.Partitions {
			ids = append(ids, tp.Partition)
		}
		c.st.revoke()
		c.st.health.Revoke(time.Now(), ids)
		c.log.Info("partitions revoked", "partitions", ids)
		c.em.Emit(status.Event{Type: status.Revoked, Partitions: ids})
	}
	return nil
}

// received takes a polled message on the poll loop: errors and the
// broker's return are handled here, the record goes to the applier.
func (c *consumer) received(m *kafka.Message, now time.Time) {
	if err := m.TopicPartition.Error; err != nil {
		c.send()
		_ = c.clientError(err)
		return
	}
	if c.down {
		c.down = false
		c.log.Info("broker reachable again", "brokers", c.cfg.Brokers)
		c.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: c.cfg.Brokers})
	}
	c.pending = append(c.pending, received{m, now})
	if len(c.pending) == batchSize {
		c.send()
	}
}

// message applies one record (on the applier).
func (c *consumer) message(m *kafka.Message, now time.Time) {
	p, off := m.TopicPartition.Partition, int64(m.TopicPartition.Offset)
	c.st.health.Received(now, p, off)
	err := c.st.apply(p, off, m.Key, m.Value)
	reason := ""
	if err != nil {
		reason = err.Error()
	}
	c.st.health.Done(now, p, off, reason)
	if err != nil {
		c.log.Warn("invalid message skipped", "partition", p, "offset", off, "key", string(m.Key), "err", err)
		c.em.Emit(status.Event{Type: status.InvalidMessage, Partition: p, Offset: off, Error: err.Error()})
	}
	c.maybeCaughtUp()
}

func (c *consumer) maybeCaughtUp() {
	if first, processed, targets := c.st.checkCaughtUp(); first {
		ms := time.Since(c.start).Milliseconds()
		var history int64
		for p, t := range targets {
			history += t - c.lows[p]
		}
		c.log.Info("caught up", "processed", processed, "millis", ms, "history", history)
		c.em.Emit(status.Event{Type: status.CaughtUp, Processed: processed, Millis: ms, History: history})
	}
}

// refreshWatermarks learns targets that were unknown at assignment and the
// newest high watermarks librdkafka has cached from fetch responses.
func (c *consumer) refreshWatermarks(k *kafka.Consumer) {
	for _, p := range c.st.unknownTargets() {
		low, high, err := k.QueryWatermarkOffsets(c.cfg.Topic, p, int(brokerTimeout/time.Millisecond))
		if err == nil {
			c.st.setTarget(p, low, high)
			c.st.health.Watermark(time.Now(), p, high)
		}
	}
	for _, pos := range c.st.progress().Positions {
		if _, high, err := k.GetWatermarkOffsets(c.cfg.Topic, pos.Partition); err == nil && high >= 0 {
			c.st.seenHighWatermark(pos.Partition, high)
			c.st.health.Watermark(time.Now(), pos.Partition, high)
		}
	}
}

// clientError returns an error only for a fatal one: the handle is no
// longer usable and the process ends with it (its reason on the status
// stream, see cli.ExitReporting).
func (c *consumer) clientError(err error) error {
	kerr, ok := err.(kafka.Error)
	if ok && kerr.IsFatal() {
		c.log.Error("fatal kafka error", "err", err)
		return fmt.Errorf("kafka: %w", err)
	}
	if ok {
		switch kerr.Code() {
		case kafka.ErrAllBrokersDown, kafka.ErrTransport, kafka.ErrResolve, kafka.ErrTimedOut,
			kafka.ErrUnknownTopicOrPart, kafka.ErrUnknownTopic, kafka.ErrUnknownPartition:
			c.retrying(err)
			return nil
		}
	}
	c.log.Warn("kafka client error", "err", err)
	return nil
}

// checkBack reports the broker reachable again when no message would say
// so (the producer paused): a metadata answer is enough.
func (c *consumer) checkBack(k *kafka.Consumer) {
	if !c.down {
		return
	}
	if _, err := k.GetMetadata(&c.cfg.Topic, false, 500); err != nil {
		return
	}
	c.down = false
	c.log.Info("broker reachable again", "brokers", c.cfg.Brokers)
	c.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: c.cfg.Brokers})
}

// retrying reports an unreachable dependency at once and then every few
// seconds while it lasts; librdkafka reconnects by itself.
func (c *consumer) retrying(err error) {
	if c.down && time.Since(c.lastRetry) < retryReportEvery {
		return
	}
	c.down = true
	c.lastRetry = time.Now()
	c.log.Warn("broker unreachable; retrying", "brokers", c.cfg.Brokers, "err", err)
	c.em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: c.cfg.Brokers, Error: err.Error()})
}
