package embedded

import (
	"fmt"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// The changelog is compacted within seconds, after a reload from the data
// dir too (kfake starts its cleaner only when a topic is created or its
// configuration altered); the topic itself keeps every message, old ones
// included (the cleaner also applies retention).
func TestBrokerCompactsTheChangelog(t *testing.T) {
	dir := t.TempDir()
	changelog := kafkacfg.ChangelogTopic(testTopic)
	for round := range 2 {
		b := startBroker(t, dir)
		// Ten batches of the same three keys: compaction keeps the last
		// batch whole and one record of each key before it.
		for batch := range 10 {
			produceAt(t, b.addr, changelog, time.Now(), fmt.Sprint(round, batch), "a", "b", "c")
		}
		// Messages a month old in the topic itself.
		produceAt(t, b.addr, testTopic, time.Now().AddDate(0, -1, 0), "old", "sensor-1", "sensor-2")
		began := time.Now()
		awaitCount(t, b.addr, changelog, func(n int) bool { return n <= 6 }, "compacted to the last batch and one record of each key")
		t.Logf("round %d: compacted within %s", round, time.Since(began).Round(10*time.Millisecond))
		if n := count(t, b.addr, testTopic); n != 2*(round+1) {
			t.Fatalf("round %d: the topic holds %d messages, want every one of the %d produced", round, n, 2*(round+1))
		}
		b.stop()
	}
}

func produceAt(t *testing.T, addr, topic string, at time.Time, value string, keys ...string) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": addr, "linger.ms": 0})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	reports := make(chan kafka.Event, len(keys))
	for _, k := range keys {
		err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key: []byte(k), Value: []byte(value), Timestamp: at}, reports)
		if err != nil {
			t.Fatal(err)
		}
	}
	for range keys {
		select {
		case ev := <-reports:
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				t.Fatalf("produce to %s: %v", topic, m.TopicPartition.Error)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("produce to %s: no delivery report", topic)
		}
	}
}

// count reads topic's records from the start to the end.
func count(t *testing.T, addr, topic string) int {
	t.Helper()
	c, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": addr, "group.id": "count", "enable.auto.commit": false})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, 10000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pm := range md.Topics[topic].Partitions {
		low, high, err := c.QueryWatermarkOffsets(topic, pm.ID, 10000)
		if err != nil {
			t.Fatal(err)
		}
		if high == low {
			continue
		}
		if err := c.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: pm.ID, Offset: kafka.Offset(low)}}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; {
			if time.Now().After(deadline) {
				t.Fatalf("%s/%d not read to %d", topic, pm.ID, high)
			}
			if m, ok := c.Poll(100).(*kafka.Message); ok {
				n++
				if int64(m.TopicPartition.Offset) >= high-1 {
					break
				}
			}
		}
	}
	return n
}

// awaitCount reads topic again until its record count satisfies ok, or
// fails after 20 s.
func awaitCount(t *testing.T, addr, topic string, ok func(int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := count(t, addr, topic)
		if ok(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still holds %d records after 20 s: not %s", topic, n, what)
		}
		time.Sleep(200 * time.Millisecond) // polling the broker's answer
	}
}
