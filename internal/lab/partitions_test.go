package lab

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/producer"
)

// TestPartitionsAgreeWithTheTopic: the real producer publishes to a real
// broker; every sensor's records are in the partition the lab's
// partitions poll puts the sensor in, and the board (fed consumer-current's
// view of where each sensor is, here read straight from the topic) flags
// no sensor as misplaced.
func TestPartitionsAgreeWithTheTopic(t *testing.T) {
	addr, topic := embeddedtest.Broker(t, "sensor-data")
	const sensors, count = 10, 3
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := producer.Run(ctx, producer.Config{Brokers: addr, Topic: topic, Sensors: sensors, Interval: 5 * time.Millisecond,
		Count: count, Seed: 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Where every sensor's records really are.
	c, err := kafka.NewConsumer(kafkacfg.Audit(addr, "krl-test-partitions"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tps []kafka.TopicPartition
	for p := range int32(3) {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		t.Fatal(err)
	}
	where := map[string]map[int32]int{}
	for n := 0; n < sensors*count; {
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", n, sensors*count)
		}
		m, err := c.ReadMessage(time.Second)
		if err != nil {
			continue
		}
		k := string(m.Key)
		if where[k] == nil {
			where[k] = map[int32]int{}
		}
		where[k][m.TopicPartition.Partition]++
		n++
	}

	l, err := New(Config{RunDir: t.TempDir(), Brokers: addr, Mongo: "mongodb://127.0.0.1:2", Topic: topic, Sensors: sensors})
	if err != nil {
		t.Fatal(err)
	}
	if l.offsets, err = observe.NewOffsets(addr, nil); err != nil {
		t.Fatal(err)
	}
	defer l.closeClients()
	l.pollPartitions(ctx)
	var snap board.SensorsSnapshot
	snap.At = time.Now()
	for id, parts := range where {
		for p := range parts {
			snap.Sensors = append(snap.Sensors, board.SensorState{SensorID: id, Partition: p})
		}
	}
	l.emit(snap)
	var v board.PartitionsView
	l.Observe(func(b *board.Board) { v = b.Partitions() })
	if len(v.Rows) != 3 || v.Err != nil {
		t.Fatalf("partitions view: %+v", v)
	}
	placed := 0
	for _, row := range v.Rows {
		for _, id := range row.Sensors {
			placed++
			if len(where[id]) != 1 || where[id][row.Partition] != count {
				t.Errorf("%s: computed partition %d, records in %v", id, row.Partition, where[id])
			}
		}
		if len(row.Misplaced) != 0 {
			t.Errorf("p%d: misplaced %v", row.Partition, row.Misplaced)
		}
		t.Logf("p%d leader %d replicas %v isr %v sensors %v", row.Partition, row.Leader, row.Replicas, row.ISR, row.Sensors)
	}
	if placed != sensors || len(where) != sensors {
		t.Errorf("placed %d sensors, the topic has %d, want %d", placed, len(where), sensors)
	}
	if os.Getenv("KAFKA_BROKER") == "" && !v.SingleNode {
		t.Errorf("the embedded broker is one node: %+v", v)
	}
}

// TestPartitionsFailoverFromRealMetadata: a leader moved on a three-node
// kfake cluster reaches the board through the lab's poll as a timed
// leader change, from the exit of the old leader's process.
func TestPartitionsFailoverFromRealMetadata(t *testing.T) {
	const topic = "sensor-data"
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	l, err := New(Config{RunDir: t.TempDir(), Brokers: addr, Mongo: "mongodb://127.0.0.1:2", Topic: topic, Sensors: 10})
	if err != nil {
		t.Fatal(err)
	}
	l.mirror = board.New([]string{board.Producer, "broker-0", "broker-1", "broker-2"}, board.Config{Topic: topic})
	if l.offsets, err = observe.NewOffsets(addr, nil); err != nil {
		t.Fatal(err)
	}
	defer l.closeClients()
	ctx := context.Background()
	l.pollPartitions(ctx)
	var from int32
	l.Observe(func(b *board.Board) { from = b.Partitions().Rows[1].Leader })
	to := (from + 1) % 3
	old := board.ClusterBroker(int(from))
	l.emit(board.ProcStarted{Name: old, PID: 1, At: time.Now().Add(-time.Minute)})
	l.emit(board.ProcExited{Name: old, PID: 1, At: time.Now(), Signal: "SIGKILL"})
	if err := c.MoveTopicPartition(topic, 1, to); err != nil {
		t.Fatal(err)
	}
	l.pollPartitions(ctx)
	var events []string
	l.Observe(func(b *board.Board) {
		for _, e := range b.Events() {
			events = append(events, e.Text)
		}
	})
	want := fmt.Sprintf("partition 1 leader %d → %d in ", from, to)
	found := false
	for _, e := range events {
		if strings.HasPrefix(e, want) && strings.Contains(e, "after "+old+" exited") {
			found = true
			t.Log(e)
		}
	}
	if !found {
		t.Errorf("no %q… event in %q", want, events)
	}
}
