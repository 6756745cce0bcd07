package kafkacfg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// The expected partitions are zlib's CRC-32 (Python: zlib.crc32(key) % 3),
// an implementation independent of Go's hash/crc32.
func TestPartitionFor(t *testing.T) {
	want := map[string]int32{
		"sensor-01": 2, "sensor-02": 1, "sensor-03": 1, "sensor-04": 2, "sensor-05": 2,
		"sensor-06": 1, "sensor-07": 2, "sensor-08": 2, "sensor-09": 0, "sensor-10": 1,
	}
	for k, p := range want {
		if got := kafkacfg.PartitionFor(k, 3); got != p {
			t.Errorf("PartitionFor(%q, 3) = %d, want %d", k, got, p)
		}
	}
	// crc32("sensor-01") = 2236245575: checks the unsigned modulo.
	if got := kafkacfg.PartitionFor("sensor-01", 10); got != 5 {
		t.Errorf("PartitionFor(sensor-01, 10) = %d, want 5", got)
	}
	if got := kafkacfg.PartitionFor("x", 0); got != -1 {
		t.Errorf("no partitions: %d, want -1", got)
	}
	if got := kafkacfg.PartitionFor("", 3); got != -1 {
		t.Errorf("empty key: %d, want -1", got)
	}
}

// TestPartitionForMatchesProducer produces with the producer's own config
// and checks every delivery report's partition is PartitionFor's.
func TestPartitionForMatchesProducer(t *testing.T) {
	addr, topic := embeddedtest.Broker(t, "sensor-data")
	p, err := kafka.NewProducer(kafkacfg.Producer(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dr := make(chan kafka.Event, 64)
	const n = 30
	for i := range n {
		key := fmt.Sprintf("sensor-%02d", i+1)
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key: []byte(key), Value: []byte("v")}, dr); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(20 * time.Second)
	for range n {
		select {
		case e := <-dr:
			m := e.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
			if want := kafkacfg.PartitionFor(string(m.Key), 3); m.TopicPartition.Partition != want {
				t.Errorf("%s landed in partition %d, PartitionFor says %d", m.Key, m.TopicPartition.Partition, want)
			}
		case <-deadline:
			t.Fatal("deliveries not confirmed within 20s")
		}
	}
}
