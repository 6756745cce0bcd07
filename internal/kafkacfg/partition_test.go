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

func TestProduceError(t *testing.T) {
	line := "127.0.0.1:38869/0: sensor-data [1]: MessageSet with 2 message(s) (MsgId 3, BaseSeq 2) encountered error: Broker: Not enough in-sync replicas (actions Retry,MsgNotPersisted)"
	if got, ok := kafkacfg.ProduceError(line); !ok || got != "NOT_ENOUGH_REPLICAS (Broker: Not enough in-sync replicas)" {
		t.Errorf("ProduceError = %q, %v", got, ok)
	}
	if got, ok := kafkacfg.ProduceError("sensor-data [1]: MessageSet with 1 message(s) encountered error: Local: Something new (actions Retry)"); !ok || got != "Local: Something new" {
		t.Errorf("unknown error: %q, %v", got, ok)
	}
	if _, ok := kafkacfg.ProduceError("Produce MessageSet with 1 message(s) (180 bytes, ApiVersion 7, MsgVersion 2, MsgId 0, BaseSeq -1, PID{Invalid}, uncompressed)"); ok {
		t.Error("a plain produce line read as an error")
	}
}
