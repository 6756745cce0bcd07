// Package embeddedtest starts the embedded broker and store inside a test
// process, and picks the broker a broker-level test runs against: the
// embedded one, or a real Apache Kafka named by KAFKA_BROKER (CI's second
// pass). One copy of this for every package's tests.
package embeddedtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/embedded"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// listenSink catches the role's Listening event: the real bound address.
type listenSink struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
}

func (s *listenSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for {
		line, err := s.buf.ReadBytes('\n')
		if err != nil {
			s.buf.Write(line) // an incomplete line waits for the rest
			return len(p), nil
		}
		if e, err := status.Parse(line); err == nil && e.Type == status.Listening {
			select {
			case s.addr <- e.Addr:
			default:
			}
		}
	}
}

// run starts a role in-process and returns its address once it listens;
// the role is stopped when the test ends.
func run(t testing.TB, what string, start func(ctx context.Context, em *status.Emitter) error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sink := &listenSink{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- start(ctx, status.NewTo(what, sink)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("%s did not stop within 20s", what)
		}
	})
	select {
	case addr := <-sink.addr:
		return addr
	case err := <-done:
		t.Fatalf("%s returned before listening: %v", what, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no listening event within 30s", what)
	}
	return ""
}

// StartBroker runs the embedded kfake broker on a free port with topic of
// partitions partitions and returns its address.
func StartBroker(t testing.TB, topic string, partitions int32) string {
	t.Helper()
	return StartBrokerOn(t, "127.0.0.1:0", topic, partitions)
}

// StartBrokerOn is StartBroker on a given address (a test of a broker that
// comes up late, on a port its clients already know).
func StartBrokerOn(t testing.TB, listen, topic string, partitions int32) string {
	t.Helper()
	return run(t, "broker", func(ctx context.Context, em *status.Emitter) error {
		return embedded.RunBroker(ctx, embedded.BrokerConfig{DataDir: t.TempDir(), Listen: listen,
			Topic: topic, Partitions: partitions}, em, nil)
	})
}

// StartStore runs the embedded FerretDB on a free port and returns its
// mongodb:// URI for database db.
func StartStore(t testing.TB, db string) string {
	t.Helper()
	addr := run(t, "store", func(ctx context.Context, em *status.Emitter) error {
		return embedded.RunStore(ctx, embedded.StoreConfig{DataDir: t.TempDir(), Listen: "127.0.0.1:0"}, em, nil)
	})
	return "mongodb://" + addr + "/" + db
}

// Broker gives a broker with a topic of 3 partitions: the embedded broker
// with topic, or, when KAFKA_BROKER is set, that broker with a fresh
// uniquely named topic (so runs sharing a real broker do not collide). An
// unreachable KAFKA_BROKER fails the test: nothing is skipped.
func Broker(t testing.TB, topic string) (addr, topicName string) {
	t.Helper()
	addr = os.Getenv("KAFKA_BROKER")
	if addr == "" {
		return StartBroker(t, topic, 3), topic
	}
	topicName = fmt.Sprintf("%s-%d", topic, time.Now().UnixNano())
	a, err := kafka.NewAdminClient(kafkacfgtest.Admin(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topicName, NumPartitions: 3, ReplicationFactor: 1}})
	if err != nil {
		t.Fatalf("KAFKA_BROKER=%s: create topic: %v", addr, err)
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			t.Fatalf("KAFKA_BROKER=%s: create topic %s: %v", addr, r.Topic, r.Error)
		}
	}
	t.Logf("broker: KAFKA_BROKER=%s, topic %s", addr, topicName)
	return addr, topicName
}
