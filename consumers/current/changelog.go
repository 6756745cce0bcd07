package current

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/api"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// The changelog is a compacted topic of one partition, keyed by sensor. A
// publication is the values of the sensors whose state changed since the
// previous one, then a mark: the offsets of the topic that every value
// before it covers. Compaction keeps each key's latest record, so the
// topic stays about one record per sensor however long it runs.
//
// A restart reads it to the end, starts each partition of the topic at
// the last mark's offset, and takes each sensor's latest value. A value
// published after that mark (a publication cut short by a crash) covers
// more of its sensor: the sensor's records below the value's own offsets
// are read but not applied again (state.floors), so its state and its
// validation go on exactly as if the whole topic had been read.

// changelogReaderGroup is the reader's group id: it never joins it nor
// commits (librdkafka only wants one).
const changelogReaderGroup = kafkacfg.CurrentGroupPrefix + "changelog-reader"

// markKey is the mark's key: no sensor id starts with a NUL.
const markKey = "\x00mark"

// changelogValue is one sensor's record.
type changelogValue struct {
	TopicID    string                `json:"topic_id"`
	Sensor     api.SensorState       `json:"sensor"`
	References []telemetry.Reference `json:"references"`
	// Through is the source offsets the value reflects: per partition of
	// the topic, the offset after the last record read when it was
	// published.
	Through map[int32]int64 `json:"through"`
}

// changelogMark ends a publication.
type changelogMark struct {
	Topic   string          `json:"topic"`
	TopicID string          `json:"topic_id"`
	At      time.Time       `json:"at"`
	Through map[int32]int64 `json:"through"`
	Sensors int             `json:"sensors"`
}

// changelog is what a restart read: each key's latest value, the last
// mark (nil when none), and how many records it took.
type changelog struct {
	values map[string]changelogValue
	mark   *changelogMark
	read   int64
	marks  int64 // of read, the marks
}

// readChangelog reads topic's one partition from its first record to its
// end, by assignment.
func readChangelog(brokers, topic string, timeout time.Duration) (changelog, error) {
	out := changelog{values: map[string]changelogValue{}}
	k, err := kafka.NewConsumer(kafkacfg.ChangelogReader(brokers, changelogReaderGroup))
	if err != nil {
		return out, err
	}
	defer k.Close()
	low, high, err := k.QueryWatermarkOffsets(topic, 0, int(timeout/time.Millisecond))
	if kerr, ok := err.(kafka.Error); ok && (kerr.Code() == kafka.ErrUnknownPartition || kerr.Code() == kafka.ErrUnknownTopicOrPart || kerr.Code() == kafka.ErrUnknownTopic) {
		return out, nil // no changelog yet: nothing was published
	}
	if err != nil {
		return out, err
	}
	if high <= low {
		return out, nil
	}
	if err := k.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.Offset(low)}}); err != nil {
		return out, err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		switch e := k.Poll(100).(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				return out, e.TopicPartition.Error
			}
			out.read++
			if err := out.take(e.Key, e.Value); err != nil {
				return out, fmt.Errorf("record at offset %d: %w", e.TopicPartition.Offset, err)
			}
			if int64(e.TopicPartition.Offset) >= high-1 {
				return out, nil
			}
		case kafka.Error:
			if e.IsFatal() {
				return out, e
			}
		}
	}
	return out, fmt.Errorf("not read to its end (offset %d) within %s", high, timeout)
}

// take keeps a record: the latest of each key wins, as compaction keeps it.
func (c *changelog) take(key, value []byte) error {
	if string(key) == markKey {
		var m changelogMark
		if err := json.Unmarshal(value, &m); err != nil {
			return err
		}
		c.mark = &m
		c.marks++
		return nil
	}
	var v changelogValue
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	if v.Sensor.SensorID != string(key) {
		return fmt.Errorf("key %q holds sensor %q", key, v.Sensor.SensorID)
	}
	c.values[v.Sensor.SensorID] = v
	return nil
}

// restored is the state the changelog holds for topicID: the last mark's
// offsets, the values of that topic (a value of an earlier topic of the
// same name is not its state), and the floors of the values published
// after the mark.
func (c changelog) restored(topicID string) restored {
	r := restored{cut: cut{through: maps.Clone(c.mark.Through)}, floors: map[floorKey]int64{}}
	for _, id := range sortedKeys(c.values) {
		v := c.values[id]
		if v.TopicID != topicID {
			continue
		}
		r.sensors = append(r.sensors, v.Sensor)
		r.refs = append(r.refs, v.References...)
		for p, off := range v.Through {
			if off > r.through[p] {
				r.floors[floorKey{id, p}] = off
			}
		}
	}
	return r
}

// publisher publishes the state to the changelog, coalesced: at each
// publication only the sensors whose state changed since the last one.
type publisher struct {
	brokers, topic, changelog string
	log                       *slog.Logger
	p                         *kafka.Producer
	// published is each sensor's state the changelog holds from this
	// process; through the offsets of its last mark, marked whether it
	// published one.
	published map[string]api.SensorState
	through   map[int32]int64
	marked    bool
}

func newPublisher(brokers, topic string, log *slog.Logger) *publisher {
	return &publisher{brokers: brokers, topic: topic, changelog: kafkacfg.ChangelogTopic(topic), log: log,
		published: map[string]api.SensorState{}}
}

// open makes the producer and the changelog topic if it is missing.
func (pb *publisher) open() error {
	if pb.p != nil {
		return nil
	}
	p, err := kafka.NewProducer(kafkacfg.ChangelogProducer(pb.brokers))
	if err != nil {
		return err
	}
	go func() {
		for ev := range p.Events() {
			if e, ok := ev.(kafka.Error); ok {
				pb.log.Warn("changelog producer", "err", e)
			}
		}
	}()
	if err := ensureChangelog(p, pb.changelog); err != nil {
		p.Close()
		return err
	}
	pb.p = p
	return nil
}

// ensureChangelog creates the changelog topic with its configuration
// (kafkacfg.ChangelogTopicConfig) if it does not exist; the dashboard
// creates it at launch with the topic's replication.
func ensureChangelog(p *kafka.Producer, topic string) error {
	a, err := kafka.NewAdminClientFromProducer(p)
	if err != nil {
		return err
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), brokerTimeout*5)
	defer cancel()
	res, err := a.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: kafkacfg.ChangelogPartitions,
		ReplicationFactor: -1, Config: kafkacfg.ChangelogTopicConfig()}})
	if err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	for _, r := range res {
		if code := r.Error.Code(); code != kafka.ErrNoError && code != kafka.ErrTopicAlreadyExists {
			return fmt.Errorf("create %s: %w", topic, r.Error)
		}
	}
	return nil
}

// publication is one publication's records: the values, then the mark.
type publication struct {
	changed []api.SensorState
	values  []record
	mark    record
}

// record is a changelog record's key and value.
type record struct {
	key   string
	value []byte
}

// plan is the publication c calls for (ok false when nothing changed
// since the last one). The first one is always made, a mark alone if the
// state is still empty: a start after it finds the changelog of this
// topic, not an empty one.
func (pb *publisher) plan(c cut, topicID string) (pub publication, ok bool, err error) {
	for _, st := range c.sensors {
		if pb.published[st.SensorID] != st {
			pub.changed = append(pub.changed, st)
		}
	}
	if pb.marked && len(pub.changed) == 0 && maps.Equal(c.through, pb.through) {
		return pub, false, nil
	}
	refs := map[string][]telemetry.Reference{}
	for _, r := range c.refs {
		refs[r.Message.SensorID] = append(refs[r.Message.SensorID], r)
	}
	for _, st := range pub.changed {
		v, err := json.Marshal(changelogValue{TopicID: topicID, Sensor: st, References: refs[st.SensorID], Through: c.through})
		if err != nil {
			return pub, false, err
		}
		pub.values = append(pub.values, record{st.SensorID, v})
	}
	m, err := json.Marshal(changelogMark{Topic: pb.topic, TopicID: topicID, At: time.Now().UTC(), Through: c.through, Sensors: len(c.sensors)})
	if err != nil {
		return pub, false, err
	}
	pub.mark = record{markKey, m}
	return pub, true, nil
}

// done notes that pub, planned from c, is in the changelog whole.
func (pb *publisher) done(c cut, pub publication) {
	for _, st := range pub.changed {
		pb.published[st.SensorID] = st
	}
	pb.through, pb.marked = maps.Clone(c.through), true
}

// publish publishes what changed in c, then its mark, and returns how
// many records it wrote (0 when nothing changed). The mark goes only once
// every value before it is acknowledged.
func (pb *publisher) publish(c cut, topicID string) (int, error) {
	pub, ok, err := pb.plan(c, topicID)
	if !ok || err != nil {
		return 0, err
	}
	if err := pb.open(); err != nil {
		return 0, err
	}
	var msgs []*kafka.Message
	for _, r := range pub.values {
		msgs = append(msgs, pb.message(r))
	}
	if err := pb.send(msgs); err != nil {
		return 0, err
	}
	if err := pb.send([]*kafka.Message{pb.message(pub.mark)}); err != nil {
		return 0, err
	}
	pb.done(c, pub)
	return len(msgs) + 1, nil
}

func (pb *publisher) message(r record) *kafka.Message {
	return &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &pb.changelog, Partition: 0},
		Key: []byte(r.key), Value: r.value}
}

// send produces msgs and waits for every delivery report.
func (pb *publisher) send(msgs []*kafka.Message) error {
	reports := make(chan kafka.Event, len(msgs))
	for _, m := range msgs {
		if err := pb.p.Produce(m, reports); err != nil {
			return err
		}
	}
	timeout := time.After(40 * time.Second)
	var failed error
	for range msgs {
		select {
		case ev := <-reports:
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil && failed == nil {
				failed = m.TopicPartition.Error
			}
		case <-timeout:
			return errors.New("changelog: no delivery report within 40 s")
		}
	}
	return failed
}

// close flushes and closes the producer.
func (pb *publisher) close() {
	if pb.p == nil {
		return
	}
	pb.p.Flush(int(closeTimeout / time.Millisecond))
	pb.p.Close()
	pb.p = nil
}
