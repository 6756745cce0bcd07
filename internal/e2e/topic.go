package e2e

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// Record is one record of the topic as stored by the broker.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
}

// Topic is everything in a topic at one moment.
type Topic struct {
	Records []Record // by partition, then offset
	// HighWatermarks per partition when the read started.
	HighWatermarks map[int32]int64
}

// Count is the number of records.
func (tp Topic) Count() int { return len(tp.Records) }

// ReadTopic reads every partition of topic from its low to its high
// watermark, with its own consumer: partitions assigned explicitly, no
// group membership, no commits. Records produced after the watermarks were
// taken are not included.
func ReadTopic(t testing.TB, brokers, topic string) Topic {
	t.Helper()
	return ReadTopicThrough(t, brokers, topic, nil)
}

// ReadTopicThrough is ReadTopic reading each partition at least up to
// minEnd's offset (exclusive): what a producer had acknowledged. Right
// after a leader change a cluster can answer a high watermark behind what
// the old leader acknowledged until the new leader catches up; the
// watermarks are read again until they reach minEnd, or the test fails
// after 60 s naming the partitions that never got there.
func ReadTopicThrough(t testing.TB, brokers, topic string, minEnd map[int32]int64) Topic {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfg.Audit(brokers, kafkacfg.AuditGroupPrefix+"e2e-"+RandomSuffix()))
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, 10000)
	if err != nil {
		t.Fatalf("reader: metadata of %s: %v", topic, err)
	}
	out := Topic{HighWatermarks: map[int32]int64{}}
	end := map[int32]int64{}
	var assign []kafka.TopicPartition
	for _, p := range md.Topics[topic].Partitions {
		low, high := watermarksThrough(t, c, topic, p.ID, minEnd[p.ID])
		out.HighWatermarks[p.ID] = high
		if high > low {
			end[p.ID] = high
			assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: kafka.Offset(low)})
		}
	}
	if len(out.HighWatermarks) == 0 {
		t.Fatalf("reader: topic %s has no partitions", topic)
	}
	if len(assign) > 0 {
		if err := c.Assign(assign); err != nil {
			t.Fatalf("reader: assign: %v", err)
		}
	}
	out.Records = readToEnds(t, c, topic, end)
	sort.Slice(out.Records, func(i, j int) bool {
		a, b := out.Records[i], out.Records[j]
		return a.Partition < b.Partition || (a.Partition == b.Partition && a.Offset < b.Offset)
	})
	return out
}

// watermarksThrough reads partition's watermarks again until the high one
// reaches minEnd; the test fails after 60 s.
func watermarksThrough(t testing.TB, c *kafka.Consumer, topic string, partition int32, minEnd int64) (low, high int64) {
	t.Helper()
	low, high, err := c.QueryWatermarkOffsets(topic, partition, 10000)
	first, began := high, time.Now()
	for waitUntil := began.Add(60 * time.Second); err == nil && high < minEnd; {
		if time.Now().After(waitUntil) {
			t.Fatalf("reader: %s/%d: high watermark %d, but offsets up to %d were acknowledged", topic, partition, high, minEnd)
		}
		time.Sleep(100 * time.Millisecond) // polling the broker's answer, not standing in for it
		low, high, err = c.QueryWatermarkOffsets(topic, partition, 10000)
	}
	if high != first {
		t.Logf("reader: %s/%d: high watermark %d at first, %d after %.1f s (acknowledged up to %d)",
			topic, partition, first, high, time.Since(began).Seconds(), minEnd)
	}
	if err != nil {
		t.Fatalf("reader: watermarks of %s/%d: %v", topic, partition, err)
	}
	return low, high
}

// readToEnds polls until every partition of end is read up to its end
// offset (exclusive), or fails the test after 60 s; records past an end
// are left out.
func readToEnds(t testing.TB, c *kafka.Consumer, topic string, end map[int32]int64) []Record {
	t.Helper()
	var recs []Record
	deadline := time.Now().Add(60 * time.Second)
	for len(end) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("reader: %s not read to its watermarks within 60s; missing partitions %v", topic, end)
		}
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			p, off := e.TopicPartition.Partition, int64(e.TopicPartition.Offset)
			if e.TopicPartition.Error != nil {
				t.Fatalf("reader: %s/%d: %v", topic, p, e.TopicPartition.Error)
			}
			stop, reading := end[p]
			if !reading || off >= stop {
				continue
			}
			recs = append(recs, Record{Partition: p, Offset: off, Key: e.Key, Value: e.Value})
			if off+1 >= stop {
				delete(end, p)
			}
		case kafka.Error:
			if e.IsFatal() {
				t.Fatalf("reader: %v", e)
			}
		}
	}
	return recs
}

// SensorTruth is a sensor's last valid message and where it is.
type SensorTruth struct {
	Message   telemetry.Message
	Partition int32
	Offset    int64
}

// Truth is what consumer-current must show after reading the whole topic.
type Truth struct {
	Sensors map[string]SensorTruth
	// Invalid counts records that are undecodable or whose odometers are
	// below the sensor's last valid message.
	Invalid int
	// InvalidAt lists where they are.
	InvalidAt []Record
}

// LastStates computes, from the records alone, every sensor's last valid
// message. A sensor's records are taken in offset order within their
// partition (one key lives in one partition).
func LastStates(tp Topic) Truth {
	tr := Truth{Sensors: map[string]SensorTruth{}}
	for _, r := range tp.Records {
		m, err := telemetry.Decode(r.Key, r.Value)
		if err == nil {
			if prev, ok := tr.Sensors[m.SensorID]; ok &&
				(m.Odometry.HoursTot < prev.Message.Odometry.HoursTot || m.Odometry.KmTot < prev.Message.Odometry.KmTot) {
				err = fmt.Errorf("odometer went backwards")
			}
		}
		if err != nil {
			tr.Invalid++
			tr.InvalidAt = append(tr.InvalidAt, r)
			continue
		}
		tr.Sensors[m.SensorID] = SensorTruth{Message: m, Partition: r.Partition, Offset: r.Offset}
	}
	return tr
}

// ExpectedUsage computes what the usage records of each checkpointed
// sensor must add up to: over the sensor's records from its first
// checkpointed offset (the baseline, which records nothing) through its
// current checkpoint offset, the sum of the deltas between consecutive
// valid messages, each rounded to hundredths, counted only when one of the
// two is positive. Sums are in integer cents.
func ExpectedUsage(tp Topic, checkpoints map[string]store.Checkpoint) map[string]store.Totals {
	return expectedUsage(tp, checkpoints, nil)
}

// ExpectedRecords is, per sensor, the records that must each have a usage
// record (ExpectedUsage's rule).
func ExpectedRecords(tp Topic, checkpoints map[string]store.Checkpoint) map[string][]Record {
	out := map[string][]Record{}
	expectedUsage(tp, checkpoints, func(id string, r Record) { out[id] = append(out[id], r) })
	return out
}

func expectedUsage(tp Topic, checkpoints map[string]store.Checkpoint, recordAt func(string, Record)) map[string]store.Totals {
	out := map[string]store.Totals{}
	for id, cp := range checkpoints {
		var prev *telemetry.Message
		var tot store.Totals
		for _, r := range tp.Records {
			if r.Partition != cp.FirstPartition || r.Offset < cp.FirstOffset || r.Offset > cp.Offset {
				continue
			}
			m, err := telemetry.Decode(r.Key, r.Value)
			if err != nil || m.SensorID != id {
				continue
			}
			if prev != nil {
				dh, dk, valid := usageStep(*prev, m)
				if !valid {
					continue // bad input: not a reading
				}
				if dh > 0 || dk > 0 {
					tot.HoursCents += dh
					tot.KmCents += dk
					tot.Records++
					if recordAt != nil {
						recordAt(id, r)
					}
				}
			}
			prev = &m
		}
		out[id] = tot
	}
	return out
}

// usageStep is the delta from prev to m in cents, each rounded to
// hundredths; valid is false when an odometer of m is below prev's (bad
// input, not a reading). A delta counts when either part is positive.
func usageStep(prev, m telemetry.Message) (dh, dk int64, valid bool) {
	if m.Odometry.HoursTot < prev.Odometry.HoursTot || m.Odometry.KmTot < prev.Odometry.KmTot {
		return 0, 0, false
	}
	return int64(math.Round((m.Odometry.HoursTot - prev.Odometry.HoursTot) * 100)),
		int64(math.Round((m.Odometry.KmTot - prev.Odometry.KmTot) * 100)), true
}

// Uncounted lists, per sensor, the messages of tp that yield a usage delta
// (ExpectedUsage's rule, from the sensor's message before) and have no
// usage record at recorded, although a later message of the sensor has
// one: the messages consumer-usage went past without counting. Messages
// after a sensor's last record are not read yet, and are not listed. The
// sensor's first message in tp is its baseline.
func Uncounted(tp Topic, recorded map[store.Position]bool) map[string][]Record {
	type pending struct {
		prev    *telemetry.Message
		skipped []Record
	}
	seen := map[string]*pending{}
	out := map[string][]Record{}
	for _, r := range tp.Records {
		m, err := telemetry.Decode(r.Key, r.Value)
		if err != nil {
			continue
		}
		s := seen[m.SensorID]
		if s == nil {
			s = &pending{}
			seen[m.SensorID] = s
		}
		if recorded[store.Position{Partition: r.Partition, Offset: r.Offset}] {
			out[m.SensorID] = append(out[m.SensorID], s.skipped...)
			s.skipped = nil
		} else if s.prev != nil {
			if dh, dk, valid := usageStep(*s.prev, m); !valid {
				continue
			} else if dh > 0 || dk > 0 {
				s.skipped = append(s.skipped, r)
			}
		}
		s.prev = &m
	}
	return out
}

// Produce writes raw records (key, value) to topic with an idempotent
// acks=all producer, waits for every delivery and returns where each landed.
func Produce(t testing.TB, brokers, topic string, recs ...[2][]byte) []Record {
	t.Helper()
	return ProduceWith(t, kafkacfg.Producer(brokers), topic, recs...)
}

// ProduceWith is Produce with a producer of config cfg.
func ProduceWith(t testing.TB, cfg *kafka.ConfigMap, topic string, recs ...[2][]byte) []Record {
	t.Helper()
	p, err := kafka.NewProducer(cfg)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer p.Close()
	dr := make(chan kafka.Event, len(recs))
	for _, kv := range recs {
		err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            kv[0], Value: kv[1],
		}, dr)
		if err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	var out []Record
	timeout := time.After(30 * time.Second)
	for len(out) < len(recs) {
		select {
		case ev := <-dr:
			m := ev.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
			out = append(out, Record{Partition: m.TopicPartition.Partition, Offset: int64(m.TopicPartition.Offset), Key: m.Key, Value: m.Value})
		case <-timeout:
			t.Fatalf("only %d of %d records delivered within 30s", len(out), len(recs))
		}
	}
	return out
}

// Committed returns group's committed offsets on topic (partitions without
// a commit are absent). It reads them through a consumer handle that never
// joins the group (kafkacfgtest.CommittedReader explains why not an AdminClient).
func Committed(t testing.TB, brokers, group, topic string) map[int32]int64 {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfgtest.CommittedReader(brokers, group))
	if err != nil {
		t.Fatalf("committed reader: %v", err)
	}
	defer c.Close()
	var tps []kafka.TopicPartition
	for p := range int32(Partitions) {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p})
	}
	out := map[int32]int64{}
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		got, err := c.Committed(tps, 5000)
		if kafkacfgtest.IsNoCommits(err) {
			return out
		}
		if err == nil {
			for _, tp := range got {
				if tp.Error == nil && tp.Offset >= 0 {
					out[tp.Partition] = int64(tp.Offset)
				}
			}
			return out
		}
		last = err
		time.Sleep(250 * time.Millisecond) // coordinator not ready yet: ask again
	}
	t.Fatalf("committed offsets of %s: %v", group, last)
	return nil
}

// AwaitCondition calls check until it returns nil or timeout passes, then
// fails the test with the last error. check polls state that nothing
// signals (an HTTP endpoint, the store), every interval.
func AwaitCondition(t testing.TB, what string, timeout, interval time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %s: %v", what, timeout, err)
		}
		time.Sleep(interval)
	}
}

// WithStore connects to uri for the duration of f; a connection error or
// an error from f fails the test.
func WithStore(t testing.TB, uri string, f func(ctx context.Context, st *store.Store) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	defer st.Close(ctx)
	if err := f(ctx, st); err != nil {
		t.Fatalf("store: %v", err)
	}
}

// LoadCheckpoints reads consumer-usage's checkpoints from the store.
func LoadCheckpoints(t testing.TB, uri string) (cps map[string]store.Checkpoint) {
	t.Helper()
	WithStore(t, uri, func(ctx context.Context, st *store.Store) (err error) {
		cps, err = st.LoadCheckpoints(ctx)
		return err
	})
	return cps
}
