package e2e

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// TestOutageDuringReplay kills the broker (SIGKILL) while consumer-current
// replays a long topic, its readers each holding part of it, and starts it
// again 3 s later. The replay goes on from where each partition stopped
// and ends caught up with every record applied once: processed is the
// topic's record count, nothing invalid, positions at the high watermarks
// and /state the topic's last message of every sensor, read back
// independently. On the embedded broker the restart makes the group
// rebalance (the readers are revoked and assigned again); against Apache
// Kafka (KAFKA_BROKER, KRL_KAFKA_DIR to kill and start it) the member may
// keep its partitions and the readers only reconnect.
func TestOutageDuringReplay(t *testing.T) {
	const records = 600_000
	const down = 3 * time.Second
	bin := Binary(t)
	topic := "sensor-data-" + RandomSuffix()
	brokers := os.Getenv("KAFKA_BROKER")
	kafkaDir := os.Getenv("KRL_KAFKA_DIR")
	var broker *Child
	var listen, dataDir string
	if brokers == "" {
		listen, dataDir = freeAddr(t), t.TempDir()
		broker = Start(t, bin, "broker", "--listen", listen, "--data-dir", dataDir, "--topic", topic)
		brokers = broker.Listening("kafka", 30*time.Second)
	} else {
		if kafkaDir == "" {
			t.Skip("KAFKA_BROKER without KRL_KAFKA_DIR: the test cannot restart that broker")
		}
		CreateTopic(t, brokers, topic, Partitions)
		t.Cleanup(func() { deleteTopic(t, brokers, topic) })
	}
	fill := Start(t, bin, "producer", "--brokers", brokers, "--topic", topic, "--preload", strconv.Itoa(records),
		"--sensors", "10", "--http", "")
	if code, ok := fill.WaitExit(3 * time.Minute); !ok || code != 0 {
		t.Fatalf("the fill exited %d (exited %v): %s", code, ok, fill.StderrTail(5))
	}

	cur := Start(t, bin, "consumer", "current", "--brokers", brokers, "--topic", topic)
	url := cur.URL(30 * time.Second)
	cur.Await("consumer-current replaying", func(e status.Event) bool {
		return e.Type == status.Progress && e.Processed > 0 && e.Processed < records
	}, 60*time.Second)
	// What came before the kill is judged; the replay may well end while
	// the broker is being started again (a real one answers a few seconds
	// before its start returns).
	atKill := cur.Mark()
	if broker != nil {
		broker.Kill()
		time.Sleep(down) // the outage itself, not a synchronisation
		broker = Start(t, bin, "broker", "--listen", listen, "--data-dir", dataDir, "--topic", topic)
		broker.Listening("kafka", 30*time.Second)
	} else {
		killRealKafka(t, kafkaDir)
		time.Sleep(down)
		startRealKafka(t, kafkaDir, brokers)
	}
	var before int64
	for _, e := range cur.Events()[:atKill] {
		if e.Type == status.CaughtUp {
			t.Fatalf("caught up (%d records) before the broker went down: nothing was tested", e.Processed)
		}
		if e.Type == status.Progress {
			before = e.Processed
		}
	}
	done := cur.Await("consumer-current caught up", isType(status.CaughtUp), 3*time.Minute)
	if done.Processed != records {
		t.Errorf("caught up at %d records processed, the topic has %d", done.Processed, records)
	}
	rebalanced := false
	for _, e := range cur.Events() {
		rebalanced = rebalanced || e.Type == status.Revoked
	}
	tp := ReadTopic(t, brokers, topic)
	truth := LastStates(tp)
	if tp.Count() != records || truth.Invalid != 0 {
		t.Fatalf("the topic holds %d records, %d invalid; want %d, 0", tp.Count(), truth.Invalid, records)
	}
	checkState(t, url, tp, truth)
	t.Logf("broker down for %s after %d of %d records; rebalanced: %v; caught up after %d ms with every record once",
		down, before, records, rebalanced, done.Millis)
}

// freeAddr is a loopback address with a port free now, for a broker that
// must come back on the same address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr())
}
