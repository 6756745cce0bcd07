package usage

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// A backpressure that ends while the partitions are being reassigned
// (a frozen consumer-usage thawed: its slow store call pauses them, its
// session timed out, the group revokes and assigns them again) must not
// leave them paused: librdkafka keeps a partition's pause across a revoke
// and a new assignment, and Resume(Assignment()) between the two finds
// nothing to resume.
func TestAssignmentAfterBackpressureIsNotLeftPaused(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	produce(t, brokers, topic, newSensorData(5).next(t, 6, 5))

	c, err := kafka.NewConsumer(kafkacfg.Usage(brokers, "pause-test-"+randHex(4), lesson.Earliest, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := &kafkaLoop{consumer: c, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	assigns, revokes := 0, 0
	onRebalance := func(c *kafka.Consumer, ev kafka.Event) error {
		switch e := ev.(type) {
		case kafka.AssignedPartitions:
			if err := c.Assign(e.Partitions); err != nil {
				t.Error(err)
			}
			k.pausedAsBackpressureSays(e.Partitions)
			assigns++
		case kafka.RevokedPartitions:
			revokes++ // the Go client unassigns them after this returns
		}
		return nil
	}
	if err := c.Subscribe(topic, onRebalance); err != nil {
		t.Fatal(err)
	}
	pollUntil := func(what string, done func(kafka.Event) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if done(c.Poll(100)) {
				return
			}
		}
		t.Fatalf("%s: not within 20s", what)
	}
	pollUntil("first message", func(ev kafka.Event) bool { _, ok := ev.(*kafka.Message); return ok })

	// Backpressure begins: every assigned partition is paused.
	k.storeTrouble("store slow: test")
	// The group takes the partitions away; backpressure ends meanwhile,
	// with nothing assigned to resume; the partitions come back.
	if err := c.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	pollUntil("the partitions revoked", func(kafka.Event) bool { return revokes == 1 })
	if tps, err := c.Assignment(); err != nil || len(tps) != 0 {
		t.Fatalf("assignment after the revoke: %v %v", tps, err)
	}
	k.endBackpressure()
	if err := c.Subscribe(topic, onRebalance); err != nil {
		t.Fatal(err)
	}
	pollUntil("the partitions assigned again, then a message", func(ev kafka.Event) bool {
		_, ok := ev.(*kafka.Message)
		return ok && assigns == 2
	})
}
