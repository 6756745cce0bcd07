package current

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
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

	// While it replays, readers read the member's partitions (see
	// readers.go); errors they poll come to the poll loop on errs, and
	// flowing says records were applied since the loop last looked. Once
	// caught up, the member reads them itself.
	readers     []*reader
	readersDone []chan struct{}
	errs        chan error
	flowing     atomic.Bool
}

// closeHandle closes a handle, abandoning it if Close does not return
// (after a fatal error Close can block for good).
func (c *consumer) closeHandle(k *kafka.Consumer, what string) {
	t := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- k.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			c.log.Warn(what+" close", "err", err)
		}
		c.log.Info(what+" closed", "took", time.Since(t).Round(time.Millisecond))
	case <-time.After(closeTimeout):
		c.log.Warn(what+" close did not return; abandoning the handle", "after", closeTimeout)
	}
}

func (c *consumer) run(ctx context.Context) error {
	k, err := kafka.NewConsumer(kafkacfg.Current(c.cfg.Brokers, c.cfg.GroupID))
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer c.closeHandle(k, "consumer")

	partitions, ok := c.awaitTopic(ctx, k)
	if !ok {
		c.em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
		return nil
	}
	c.rebuild(k)
	c.errs = make(chan error, 16)
	if err := c.startReaders(partitions); err != nil {
		return err
	}
	defer c.stopReaders()
	if err := k.Subscribe(c.cfg.Topic, c.rebalance); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}

	nextProgress := time.Now()
	for {
		if ctx.Err() != nil {
			c.em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
			return nil
		}
		// The member's poll serves the group (rebalances, errors) and,
		// once the replay is done, brings the records.
		ev := k.Poll(100)
		now := time.Now()
		c.st.health.Polled(now)
		switch e := ev.(type) {
		case *kafka.Message:
			c.received(e, now)
		case kafka.Error:
			if err := c.clientError(e); err != nil {
				return err
			}
		}
		if err := c.readerErrors(); err != nil {
			return err
		}
		if c.flowing.Swap(false) && c.down {
			c.down = false
			c.log.Info("broker reachable again", "brokers", c.cfg.Brokers)
			c.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: c.cfg.Brokers})
		}
		if c.readers != nil && c.st.isCaughtUp() {
			c.handOver(k)
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

// received applies a record the member polled (once the readers are gone),
// at once: live records come one at a time.
func (c *consumer) received(m *kafka.Message, now time.Time) {
	if err := m.TopicPartition.Error; err != nil {
		_ = c.clientError(err)
		return
	}
	p := m.TopicPartition.Partition
	b := []judged{c.st.judge(c.st.validator(p), p, int64(m.TopicPartition.Offset), m.Key, m.Value)}
	caughtUp, processed, targets := c.st.applyBatch(b)
	c.flowing.Store(true)
	c.reportBatch(now, b)
	if caughtUp {
		c.caughtUp(processed, targets)
	}
}

// readerErrors handles the errors the readers polled; only a fatal one is
// returned.
func (c *consumer) readerErrors() error {
	for {
		select {
		case err := <-c.errs:
			if err := c.clientError(err); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// awaitTopic waits until the broker answers with the topic's metadata,
// reporting Retrying meanwhile; false means ctx ended first.
func (c *consumer) awaitTopic(ctx context.Context, k *kafka.Consumer) (partitions int, ok bool) {
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
			return 0, false
		}
		if err == nil {
			c.down = false
			n := len(md.Topics[topic].Partitions)
			c.log.Info("broker reachable", "brokers", c.cfg.Brokers, "topic", topic, "partitions", n)
			c.em.Emit(status.Event{Type: status.Connected, Endpoint: "kafka", Addr: c.cfg.Brokers})
			return n, true
		}
		c.retrying(err)
		select {
		case <-ctx.Done():
			return 0, false
		case <-time.After(retryEvery):
		}
	}
}

func (c *consumer) rebalance(k *kafka.Consumer, ev kafka.Event) error {
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
				// A fresh group with earliest starts at the low watermark:
				// said explicitly, the readers fetch at once instead of
				// first asking the coordinator for committed offsets and
				// then the broker for the earliest.
				start[tp.Partition], target[tp.Partition] = low, high
				parts[i].Offset = kafka.Offset(low)
			}
		}
		c.st.assign(start, target)
		if c.readers != nil {
			c.assignReaders(parts)
			// The member fetches nothing itself: the readers do.
			parts = nil
		}
		if err := k.Assign(parts); err != nil {
			c.log.Warn("assign", "err", err)
		}
		c.st.health.Assign(time.Now(), start)
		for p, high := range target {
			c.st.health.Watermark(time.Now(), p, high)
		}
		c.log.Info("partitions assigned", "partitions", ids, "targets", target)
		c.em.Emit(status.Event{Type: status.Assigned, Partitions: ids})
		c.maybeCaughtUp()
	case kafka.RevokedPartitions:
		for _, r := range c.readers {
			r.revoke(false)
		}
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

func (c *consumer) maybeCaughtUp() {
	if first, processed, targets := c.st.checkCaughtUp(); first {
		c.caughtUp(processed, targets)
	}
}

// caughtUp reports the replay complete, once (the state says when), with
// the history it counts: from the low watermarks at the start to targets.
func (c *consumer) caughtUp(processed int64, targets map[int32]int64) {
	ms := time.Since(c.start).Milliseconds()
	var history int64
	for p, t := range targets {
		history += t - c.lows[p]
	}
	c.log.Info("caught up", "processed", processed, "millis", ms, "history", history)
	c.em.Emit(status.Event{Type: status.CaughtUp, Processed: processed, Millis: ms, History: history})
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
		// Cached by the handle that fetches the partition.
		h := k
		if c.readers != nil {
			r := c.readerOf(pos.Partition)
			if !r.owns(pos.Partition) {
				continue
			}
			h = r.k
		}
		if _, high, err := h.GetWatermarkOffsets(c.cfg.Topic, pos.Partition); err == nil && high >= 0 {
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
