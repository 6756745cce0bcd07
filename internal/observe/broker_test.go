package observe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// produceTo writes count[p] messages to each partition p and waits for
// every delivery.
func produceTo(t *testing.T, addr, topic string, count map[int32]int) {
	t.Helper()
	p, err := kafka.NewProducer(kafkacfg.Producer(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dr := make(chan kafka.Event, 1024)
	total := 0
	for part, n := range count {
		for i := range n {
			err := p.Produce(&kafka.Message{
				TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part},
				Key:            []byte("k"), Value: []byte(fmt.Sprintf("v%d", i)),
			}, dr)
			if err != nil {
				t.Fatal(err)
			}
			total++
		}
	}
	deadline := time.After(20 * time.Second)
	for range total {
		select {
		case e := <-dr:
			if m, ok := e.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
		case <-deadline:
			t.Fatal("deliveries not confirmed within 20s")
		}
	}
}

// commit stores offsets for group with a consumer that joins nothing
// (assign-free commit of explicit offsets).
func commit(t *testing.T, addr, group, topic string, offsets map[int32]int64) {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfg.Current(addr, group))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tps []kafka.TopicPartition
	for p, o := range offsets {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.Offset(o)})
	}
	res, err := c.CommitOffsets(tps)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	for _, tp := range res {
		if tp.Error != nil {
			t.Fatalf("commit %d: %v", tp.Partition, tp.Error)
		}
	}
}

func TestOffsetsAgainstBroker(t *testing.T) {
	addr, topic := embeddedtest.Broker(t, "sensor-data")
	o, err := NewOffsets(addr, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var hwm map[int32]int64
	// A just-created topic may need a moment for its leaders (real Kafka).
	for {
		hwm, err = o.HighWatermarks(ctx, topic)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // retry interval, not synchronisation
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 0, 1: 0, 2: 0}; !equal(hwm, want) {
		t.Fatalf("empty topic watermarks %v, want %v", hwm, want)
	}

	produceTo(t, addr, topic, map[int32]int{0: 5, 1: 7, 2: 0})
	hwm, err = o.HighWatermarks(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 5, 1: 7, 2: 0}; !equal(hwm, want) {
		t.Fatalf("watermarks %v, want %v", hwm, want)
	}

	t.Run("never committed group", func(t *testing.T) {
		got, err := o.Committed(ctx, topic+"-never-committed", topic)
		if err != nil {
			t.Fatalf("want no error, got %v", err)
		}
		if want := map[int32]int64{0: -1, 1: -1, 2: -1}; !equal(got, want) {
			t.Fatalf("committed %v, want %v", got, want)
		}
	})

	t.Run("partial commits", func(t *testing.T) {
		commit(t, addr, topic+"-some-commits", topic, map[int32]int64{0: 3, 1: 7})
		got, err := o.Committed(ctx, topic+"-some-commits", topic)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int32]int64{0: 3, 1: 7, 2: -1}; !equal(got, want) {
			t.Fatalf("committed %v, want %v", got, want)
		}
	})

	t.Run("unknown topic", func(t *testing.T) {
		if _, err := o.HighWatermarks(ctx, "no-such-topic"); err == nil {
			t.Fatal("want an error for a missing topic")
		}
	})
}

func TestOffsetsUnreachableBrokerFailsWithinDeadline(t *testing.T) {
	o, err := NewOffsets(unusedAddr(t), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for name, probe := range map[string]func(context.Context) error{
		"watermarks": func(ctx context.Context) error { _, err := o.HighWatermarks(ctx, "sensor-data"); return err },
		"committed":  func(ctx context.Context) error { _, err := o.Committed(ctx, "g", "sensor-data"); return err },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		start := time.Now()
		err := probe(ctx)
		took := time.Since(start)
		cancel()
		if err == nil {
			t.Fatalf("%s: no error from an unreachable broker", name)
		}
		if took > 2500*time.Millisecond {
			t.Fatalf("%s: took %v with a 1.5s deadline", name, took)
		}
		if !isTimeout(err) {
			t.Errorf("%s: isTimeout(%v) = false", name, err)
		}
		t.Logf("%s: %v after %v", name, err, took.Round(time.Millisecond))
	}
}

func equal(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// logBuffer keeps librdkafka's forwarded lines and shows them only when the
// test fails; it stays writable after the test ends (the forwarder may
// deliver a last line as the client closes).
type logBuffer struct {
	mu    sync.Mutex
	lines bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lines.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lines.String()
}

func testLogger(t *testing.T) *slog.Logger {
	b := &logBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client logs:\n%s", b.String())
		}
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestOffsetsAfterClose(t *testing.T) {
	o, err := NewOffsets(unusedAddr(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	o.Close() // idempotent
	if _, err := o.HighWatermarks(context.Background(), "sensor-data"); err == nil {
		t.Fatal("no error after Close")
	}
	if _, err := o.Committed(context.Background(), "g", "sensor-data"); err == nil {
		t.Fatal("no error after Close")
	}
}

// TestLayoutAgainstBroker reads the topic's placement from the broker
// (the embedded kfake, or KAFKA_BROKER) and logs what it answers.
func TestLayoutAgainstBroker(t *testing.T) {
	addr, topic := embeddedtest.Broker(t, "sensor-data")
	o, err := NewOffsets(addr, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	began := time.Now()
	lay, err := o.Layout(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("layout of %s in %s: %+v", topic, time.Since(began), lay)
	if len(lay.Partitions) != 3 {
		t.Fatalf("%d partitions, want 3", len(lay.Partitions))
	}
	for i, p := range lay.Partitions {
		if p.Partition != int32(i) {
			t.Errorf("partition %d at index %d", p.Partition, i)
		}
		if p.Leader < 0 {
			t.Errorf("p%d has no leader", p.Partition)
		}
		if len(p.Replicas) != 1 || len(p.ISR) != 1 || p.Replicas[0] != p.Leader || p.ISR[0] != p.Leader || p.Preferred != p.Leader {
			t.Errorf("p%d: one node with replication factor 1 should be leader=replicas=isr, got %+v", p.Partition, p)
		}
	}
	if _, err := o.Layout(context.Background(), "no-such-topic-krl"); err == nil {
		t.Error("a missing topic gave no error")
	}
}

// isTimeout reports whether err is a probe giving up at its deadline (the
// broker did not answer in time, e.g. it is down).
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var kerr kafka.Error
	return errors.As(err, &kerr) && kerr.Code() == kafka.ErrTimedOut
}
