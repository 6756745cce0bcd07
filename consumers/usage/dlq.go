package usage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Dead-letter forwarding is exactly once across crashes: at start the
// dead-letter topic is read to its high watermarks to learn which source
// records it already holds; any other poison record is produced (idempotent,
// acks=all, no message timeout) and its delivery awaited before its offset may
// be stored. A committed offset past a poison record thus implies the record
// is in the dead-letter topic. docs/consumer-usage.md gives the limits.

// Header names of a dead-letter record.
const (
	HeaderReason          = "reason"
	HeaderSourceTopic     = "source-topic"
	HeaderSourcePartition = "source-partition"
	HeaderSourceOffset    = "source-offset"
)

type sourcePos struct {
	partition int32
	offset    int64
}

// deadLetter is consumer-usage's DeadLetter on a Kafka topic.
type deadLetter struct {
	brokers, source, topic string
	em                     *status.Emitter
	log                    *slog.Logger

	producer *kafka.Producer
	mu       sync.Mutex
	fatal    error
	done     chan struct{}

	// forwarded: every source record in the dead-letter topic, with its
	// reason. Only the Kafka loop's goroutine touches it after open.
	forwarded map[sourcePos]string
}

// openDeadLetter creates the dead-letter topic when it is missing, reads
// it (retrying while the broker does not answer), and prepares the
// producer. An error is one retrying cannot fix; ctx ending returns ctx.Err().
func openDeadLetter(ctx context.Context, brokers, source string, em *status.Emitter, log *slog.Logger) (*deadLetter, error) {
	p, err := kafka.NewProducer(kafkacfg.DeadLetterProducer(brokers))
	if err != nil {
		return nil, fmt.Errorf("dead-letter producer: %w", err)
	}
	d := &deadLetter{brokers: brokers, source: source, topic: kafkacfg.DeadLetterTopic(source), em: em, log: log,
		producer: p, done: make(chan struct{}), forwarded: map[sourcePos]string{}}
	go d.events()
	delay := 500 * time.Millisecond
	for {
		err := d.ensureTopic(ctx)
		if err == nil {
			err = d.load(ctx)
		}
		if err == nil {
			return d, nil
		}
		if ctx.Err() != nil {
			d.close()
			return nil, ctx.Err()
		}
		log.Warn("dead-letter topic not readable; retrying", "topic", d.topic, "error", err)
		em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: brokers, Error: "dead-letter topic: " + err.Error()})
		select {
		case <-ctx.Done():
			d.close()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// ensureTopic creates the dead-letter topic unless it exists (the
// dashboard and the embedded broker create it beside the topic; a bare
// consumer-usage against another broker must not depend on that).
func (d *deadLetter) ensureTopic(ctx context.Context) error {
	admin, err := kafka.NewAdminClientFromProducer(d.producer)
	if err != nil {
		return err
	}
	defer admin.Close()
	md, err := admin.GetMetadata(&d.topic, false, 3000)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if tm, ok := md.Topics[d.topic]; ok && tm.Error.Code() == kafka.ErrNoError && len(tm.Partitions) > 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := admin.CreateTopics(cctx, []kafka.TopicSpecification{{Topic: d.topic,
		NumPartitions: kafkacfg.DeadLetterPartitions, ReplicationFactor: 1}})
	if err != nil {
		return fmt.Errorf("create %s: %w", d.topic, err)
	}
	for _, r := range res {
		if c := r.Error.Code(); c != kafka.ErrNoError && c != kafka.ErrTopicAlreadyExists {
			return fmt.Errorf("create %s: %w", d.topic, r.Error)
		}
	}
	d.log.Info("dead-letter topic created", "topic", d.topic)
	return nil
}

// load reads the dead-letter topic from its low to its high watermarks.
func (d *deadLetter) load(ctx context.Context) error {
	c, err := kafka.NewConsumer(kafkacfg.DeadLetterReader(d.brokers, kafkacfg.FreshGroup(kafkacfg.AuditGroupPrefix+"dlq-")))
	if err != nil {
		return err
	}
	defer c.Close()
	end, assign, err := d.readRanges(c)
	if err != nil {
		return err
	}
	if len(assign) > 0 {
		if err := c.Assign(assign); err != nil {
			return fmt.Errorf("assign: %w", err)
		}
	}
	found, err := d.readForwarded(ctx, c, end)
	if err != nil {
		return err
	}
	d.forwarded = found
	d.log.Info("dead-letter topic read", "topic", d.topic, "forwarded_before", len(found))
	return nil
}

// readRanges returns, for every partition of the dead-letter topic holding
// records, the offset after the last one to read (end) and its assignment
// from the earliest.
func (d *deadLetter) readRanges(c *kafka.Consumer) (map[int32]int64, []kafka.TopicPartition, error) {
	md, err := c.GetMetadata(&d.topic, false, 3000)
	if err != nil {
		return nil, nil, fmt.Errorf("metadata: %w", err)
	}
	tm, ok := md.Topics[d.topic]
	if !ok || tm.Error.Code() != kafka.ErrNoError || len(tm.Partitions) == 0 {
		return nil, nil, fmt.Errorf("topic %s not ready (%v)", d.topic, tm.Error)
	}
	end := map[int32]int64{}
	var assign []kafka.TopicPartition
	for _, p := range tm.Partitions {
		low, high, err := c.QueryWatermarkOffsets(d.topic, p.ID, 3000)
		if err != nil {
			return nil, nil, fmt.Errorf("watermarks of %s/%d: %w", d.topic, p.ID, err)
		}
		if high > low {
			end[p.ID] = high
			assign = append(assign, kafka.TopicPartition{Topic: &d.topic, Partition: p.ID, Offset: kafka.Offset(low)})
		}
	}
	return end, assign, nil
}

// readForwarded polls until every partition of end is read up to its end
// offset and returns the source records found, with their reasons.
func (d *deadLetter) readForwarded(ctx context.Context, c *kafka.Consumer, end map[int32]int64) (map[sourcePos]string, error) {
	found := map[sourcePos]string{}
	last := time.Now()
	for len(end) > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Since(last) > 10*time.Second {
			return nil, fmt.Errorf("no record for 10s while %d partitions were still to read", len(end))
		}
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			last = time.Now()
			p, off := e.TopicPartition.Partition, int64(e.TopicPartition.Offset)
			if e.TopicPartition.Error != nil {
				return nil, fmt.Errorf("%s/%d: %w", d.topic, p, e.TopicPartition.Error)
			}
			if pos, reason, ok := d.parse(e.Headers); ok {
				found[pos] = reason
			} else {
				d.log.Warn("dead-letter record without source headers ignored", "partition", p, "offset", off)
			}
			if off+1 >= end[p] {
				delete(end, p)
			}
		case kafka.Error:
			if e.IsFatal() || e.Code() == kafka.ErrAllBrokersDown {
				return nil, e
			}
		}
	}
	return found, nil
}

// parse reads a dead-letter record's source headers; ok is false for a
// record of another source topic or without them.
func (d *deadLetter) parse(hs []kafka.Header) (pos sourcePos, reason string, ok bool) {
	var havePart, haveOff bool
	for _, h := range hs {
		v := string(h.Value)
		switch h.Key {
		case HeaderSourceTopic:
			if v != d.source {
				return pos, "", false
			}
		case HeaderReason:
			reason = v
		case HeaderSourcePartition:
			n, err := strconv.ParseInt(v, 10, 32)
			pos.partition, havePart = int32(n), err == nil
		case HeaderSourceOffset:
			n, err := strconv.ParseInt(v, 10, 64)
			pos.offset, haveOff = n, err == nil
		}
	}
	return pos, reason, havePart && haveOff
}

// Forwarded reports whether the record is already in the dead-letter topic.
func (d *deadLetter) Forwarded(partition int32, offset int64) (string, bool) {
	reason, ok := d.forwarded[sourcePos{partition, offset}]
	return reason, ok
}

// Forward writes the record and returns once the broker acknowledged it.
func (d *deadLetter) Forward(ctx context.Context, r Record, reason string) error {
	if err := d.fatalErr(); err != nil {
		return err
	}
	dc := make(chan kafka.Event, 1)
	msg, sent, cut := envelope(d.topic, d.source, r, reason, kafkacfg.DeadLetterMaxBytes)
	for {
		err := d.producer.Produce(msg, dc)
		if err == nil {
			break
		}
		var kerr kafka.Error
		if !errors.As(err, &kerr) || kerr.Code() != kafka.ErrQueueFull {
			return fmt.Errorf("dead-letter topic %s: %w", d.topic, err)
		}
		select { // the local queue drains as the broker answers
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	select {
	case ev := <-dc:
		m, ok := ev.(*kafka.Message)
		if !ok {
			return fmt.Errorf("dead-letter topic %s: unexpected report %v", d.topic, ev)
		}
		if err := m.TopicPartition.Error; err != nil {
			return fmt.Errorf("dead-letter topic %s: delivery failed: %w", d.topic, err)
		}
		d.forwarded[sourcePos{r.Partition, r.Offset}] = sent
		d.log.Info("forwarded to the dead-letter topic", "partition", r.Partition, "offset", r.Offset,
			"dlq_partition", m.TopicPartition.Partition, "dlq_offset", m.TopicPartition.Offset, "reason", sent,
			"size", len(r.Key)+len(r.Value), "cut", cut)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-d.done:
		return fmt.Errorf("dead-letter topic %s: %w", d.topic, d.fatalErr())
	}
}

func (d *deadLetter) fatalErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fatal
}

// events drains the producer's events: client errors are logged; a fatal
// one fails every forward from then on (the process ends and restarts).
func (d *deadLetter) events() {
	for ev := range d.producer.Events() {
		if e, ok := ev.(kafka.Error); ok {
			if e.IsFatal() {
				d.mu.Lock()
				first := d.fatal == nil
				if first {
					d.fatal = fmt.Errorf("fatal dead-letter producer error: %w", e)
					close(d.done)
				}
				d.mu.Unlock()
				continue
			}
			d.log.Debug("dead-letter producer", "error", e)
		}
	}
}

func (d *deadLetter) close() { d.producer.Close() }
