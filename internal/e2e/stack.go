package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// Partitions of every test topic.
const Partitions = 3

// Infra is the infrastructure of one test.
type Infra struct {
	// Bin is the built binary.
	Bin string
	// Brokers is the bootstrap address; Topic is this test's own topic
	// (Partitions partitions), created for it.
	Brokers string
	Topic   string
	// Mongo is the store URI naming this test's own database.
	Mongo string
	// Broker and Store are the embedded roles' processes (nil when
	// KAFKA_BROKER / MONGO_URI name external ones).
	Broker *Child
	Store  *Child
}

// ConnArgs are the connection flags every role takes.
func (in *Infra) ConnArgs() []string {
	return []string{"--brokers", in.Brokers, "--mongo", in.Mongo, "--topic", in.Topic}
}

// Role starts a role of the binary connected to this infrastructure, e.g.
// Role(t, "consumer", "current") or Role(t, "producer", "--seed", "1").
func (in *Infra) Role(t testing.TB, args ...string) *Child {
	t.Helper()
	n := 1
	if args[0] == "consumer" {
		n = 2
	}
	full := append(append(append([]string{}, args[:n]...), in.ConnArgs()...), args[n:]...)
	return Start(t, in.Bin, full...)
}

// RandomSuffix is 8 hex characters, for names that must not collide
// between tests sharing one broker.
func RandomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Stack provides a broker and a store for t: the ones named by
// KAFKA_BROKER / MONGO_URI (which must be reachable, or the test fails),
// else embedded ones started as children of the binary. Each test gets its
// own topic and database, so suites can share a real broker.
func Stack(t testing.TB) *Infra {
	t.Helper()
	in := &Infra{Bin: Binary(t), Topic: "sensor-data-" + RandomSuffix()}
	db := "krl_e2e_" + RandomSuffix()

	brokerEnv, mongoEnv := os.Getenv("KAFKA_BROKER"), os.Getenv("MONGO_URI")
	if brokerEnv == "" {
		in.Broker = Start(t, in.Bin, "broker", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	}
	if mongoEnv == "" {
		in.Store = Start(t, in.Bin, "store", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	}

	if in.Broker != nil {
		in.Brokers = in.Broker.Listening("kafka", 30*time.Second)
		t.Logf("broker: embedded kfake at %s", in.Brokers)
	} else {
		in.Brokers = brokerEnv
		t.Logf("broker: KAFKA_BROKER=%s", in.Brokers)
	}
	if in.Store != nil {
		in.Mongo = "mongodb://" + in.Store.Listening("mongo", 30*time.Second) + "/" + db
		t.Logf("store: embedded FerretDB, %s", in.Mongo)
	} else {
		u, err := WithDatabase(mongoEnv, db)
		if err != nil {
			t.Fatalf("MONGO_URI: %v", err)
		}
		in.Mongo = u
		t.Logf("store: MONGO_URI, database %s", db)
	}

	CreateTopic(t, in.Brokers, in.Topic, Partitions)
	CreateTopic(t, in.Brokers, kafkacfg.DeadLetterTopic(in.Topic), kafkacfg.DeadLetterPartitions)
	if in.Broker == nil {
		// A shared broker keeps no test topics around.
		t.Cleanup(func() {
			deleteTopic(t, in.Brokers, in.Topic)
			deleteTopic(t, in.Brokers, kafkacfg.DeadLetterTopic(in.Topic))
			deleteTopic(t, in.Brokers, kafkacfg.ChangelogTopic(in.Topic))
		})
	}
	checkStore(t, in.Mongo, mongoEnv != "")
	return in
}

// WithDatabase returns uri naming database db (store.WithDatabase).
func WithDatabase(uri, db string) (string, error) { return store.WithDatabase(uri, db) }

// checkStore fails the test when the store does not answer; an external
// database is dropped at the end of the test.
func checkStore(t testing.TB, uri string, external bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	st, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	if err := st.Ping(ctx); err != nil {
		_ = st.Close(ctx)
		t.Fatalf("store %s unreachable: %v", uri, err)
	}
	_ = st.Close(ctx)
	if external {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if st, err := store.Connect(ctx, uri); err == nil {
				_ = st.Drop(ctx)
				_ = st.Close(ctx)
			}
		})
	}
}

// CreateTopic creates topic through an AdminClient and waits until every
// partition has a leader. The broker must answer: an unreachable one fails
// the test.
func CreateTopic(t testing.TB, brokers, topic string, partitions int) {
	t.Helper()
	admin, err := kafka.NewAdminClient(kafkacfgtest.Admin(brokers))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer admin.Close()
	if _, err := admin.GetMetadata(nil, false, 10000); err != nil {
		t.Fatalf("broker %s unreachable: %v", brokers, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}},
		kafka.SetAdminOperationTimeout(20*time.Second))
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			t.Fatalf("create topic %s: %v", topic, r.Error)
		}
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		md, err := admin.GetMetadata(&topic, false, 5000)
		if err == nil {
			tm := md.Topics[topic]
			ready := tm.Error.Code() == kafka.ErrNoError && len(tm.Partitions) == partitions
			for _, p := range tm.Partitions {
				ready = ready && p.Leader >= 0 && p.Error.Code() == kafka.ErrNoError
			}
			if ready {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s has no leaders after 30s (last error %v)", topic, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the broker's metadata, nothing to wait on
	}
}

func deleteTopic(t testing.TB, brokers, topic string) {
	admin, err := kafka.NewAdminClient(kafkacfgtest.Admin(brokers))
	if err != nil {
		return
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.DeleteTopics(ctx, []string{topic}); err != nil {
		t.Logf("delete topic %s: %v", topic, err)
	}
}
