package producer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// resumeGroupID is only there because librdkafka wants a group id: the
// reader assigns partitions itself, never joins the group, never commits.
const resumeGroupID = kafkacfg.AuditGroupPrefix + "producer-resume"

// metadataTimeout bounds each blocking broker call, so SIGTERM is honoured
// promptly while the broker is unreachable.
const metadataTimeout = 2 * time.Second

// stallTimeout gives up a resume read that stopped making progress (the
// broker went away mid-read); the caller retries it.
const stallTimeout = 10 * time.Second

// LoadLast reads topic from the earliest offsets up to the high watermarks
// it finds at start and returns, per sensor id, the message the simulation
// must continue from: the valid message with the highest odometers (a later
// record whose odometer went backwards is bad input and is not continued
// from). Invalid records are skipped.
func LoadLast(ctx context.Context, brokers, topic string, log *slog.Logger) (map[string]telemetry.Message, error) {
	c, err := kafka.NewConsumer(kafkacfg.Audit(brokers, resumeGroupID))
	if err != nil {
		return nil, fmt.Errorf("resume reader: %w", err)
	}
	defer c.Close()

	parts, err := topicPartitions(c, topic)
	if err != nil {
		return nil, err
	}
	end, assign, err := readRanges(c, topic, parts)
	if err != nil {
		return nil, err
	}
	r := &resumeRead{last: map[string]telemetry.Message{}, lastAt: map[string]kafka.TopicPartition{}}
	if len(assign) == 0 {
		return r.last, nil
	}
	if err := c.Assign(assign); err != nil {
		return nil, fmt.Errorf("assign: %w", err)
	}
	start := time.Now()
	if err := r.readTo(ctx, c, end); err != nil {
		return nil, err
	}
	log.Info("read topic to continue odometers", "topic", topic, "records", r.read, "invalid", r.invalid,
		"sensors", len(r.last), "took", time.Since(start).Round(time.Millisecond))
	return r.last, nil
}

// topicPartitions returns topic's partitions, or why the topic cannot be
// read.
func topicPartitions(c *kafka.Consumer, topic string) ([]kafka.PartitionMetadata, error) {
	md, err := c.GetMetadata(&topic, false, int(metadataTimeout/time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	tm, ok := md.Topics[topic]
	if !ok {
		return nil, fmt.Errorf("topic %s not in metadata", topic)
	}
	if tm.Error.Code() != kafka.ErrNoError {
		return nil, fmt.Errorf("topic %s: %w", topic, tm.Error)
	}
	if len(tm.Partitions) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", topic)
	}
	return tm.Partitions, nil
}

// readRanges returns, for every partition holding records, the offset
// after the last one to read (end) and its assignment from the earliest.
func readRanges(c *kafka.Consumer, topic string, parts []kafka.PartitionMetadata) (map[int32]int64, []kafka.TopicPartition, error) {
	end := map[int32]int64{}
	var assign []kafka.TopicPartition
	for _, p := range parts {
		low, high, err := c.QueryWatermarkOffsets(topic, p.ID, int(metadataTimeout/time.Millisecond))
		if err != nil {
			return nil, nil, fmt.Errorf("watermarks of partition %d: %w", p.ID, err)
		}
		if high > low {
			end[p.ID] = high
			assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: kafka.Offset(low)})
		}
	}
	return end, assign, nil
}

// resumeRead is LoadLast's read of the topic: the message to continue
// from per sensor, and counts for the log.
type resumeRead struct {
	last          map[string]telemetry.Message
	lastAt        map[string]kafka.TopicPartition // where each of last was read
	read, invalid int
}

// readTo polls until every partition of end is read up to its end offset
// (each is removed from end as it is).
func (r *resumeRead) readTo(ctx context.Context, c *kafka.Consumer, end map[int32]int64) error {
	lastProgress := time.Now()
	for len(end) > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Since(lastProgress) > stallTimeout {
			return fmt.Errorf("no record for %s while %d partitions were still to read", stallTimeout, len(end))
		}
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			lastProgress = time.Now()
			p := e.TopicPartition.Partition
			if e.TopicPartition.Error != nil {
				return fmt.Errorf("partition %d: %w", p, e.TopicPartition.Error)
			}
			r.add(e)
			if int64(e.TopicPartition.Offset)+1 >= end[p] {
				delete(end, p)
			}
		case kafka.Error:
			if e.IsFatal() || e.Code() == kafka.ErrAllBrokersDown {
				return e
			}
		}
	}
	return nil
}

// add keeps e's message as its sensor's unless it is invalid, or invalid
// after the one kept (telemetry.CheckSuccessor: behind it, or a jump).
func (r *resumeRead) add(e *kafka.Message) {
	r.read++
	m, err := telemetry.Decode(e.Key, e.Value)
	if err != nil {
		r.invalid++
		return
	}
	// A reading the consumers refuse must not become where the
	// simulation goes on from: every reading after it would be refused too.
	steps := int64(1)
	if at, ok := r.lastAt[m.SensorID]; ok && at.Partition == e.TopicPartition.Partition {
		steps = int64(e.TopicPartition.Offset - at.Offset)
	}
	if prev, seen := r.last[m.SensorID]; !seen || telemetry.CheckSuccessorAfter(prev, m, steps) == nil {
		r.last[m.SensorID] = m
		if r.lastAt != nil {
			r.lastAt[m.SensorID] = e.TopicPartition
		}
	}
}

// resume reads the topic until it succeeds; ok=false means ctx ended first.
func resume(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) (map[string]telemetry.Message, bool) {
	for {
		last, err := LoadLast(ctx, cfg.Brokers, cfg.Topic, log)
		if ctx.Err() != nil {
			return nil, false
		}
		if err == nil {
			return last, true
		}
		log.Warn("cannot read the topic to continue odometers; retrying", "brokers", cfg.Brokers, "err", err)
		em.Emit(status.Event{Type: status.Retrying, Endpoint: "kafka", Addr: cfg.Brokers, Error: err.Error()})
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(retryEvery):
		}
	}
}
