package audit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

const topic = telemetry.DefaultTopic

// logBuffer keeps log lines and shows them only when the test fails; it
// stays writable after the test ends.
type logBuffer struct {
	mu    sync.Mutex
	lines bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lines.Write(p)
}

func testLogger(t *testing.T) *slog.Logger {
	b := &logBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			b.mu.Lock()
			t.Logf("logs:\n%s", b.lines.String())
			b.mu.Unlock()
		}
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// producer sends records and returns them as they were stored (partition
// and offset from the delivery reports).
type producer struct {
	t     *testing.T
	p     *kafka.Producer
	dr    chan kafka.Event
	topic string
}

func newProducer(t *testing.T, addr string) *producer {
	return newProducerTo(t, addr, topic)
}

func newProducerTo(t *testing.T, addr, topicName string) *producer {
	p, err := kafka.NewProducer(kafkacfg.Producer(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &producer{t: t, p: p, dr: make(chan kafka.Event, 4096), topic: topicName}
}

// send produces every key/value pair (nil key allowed) and waits for all of
// them, returning the stored records in delivery order.
func (pr *producer) send(kvs [][2][]byte) []record {
	pr.t.Helper()
	tp := pr.topic
	out := make([]record, 0, len(kvs))
	pending := 0
	flush := func(all bool) {
		for pending > 0 && (all || pending >= cap(pr.dr)) {
			select {
			case e := <-pr.dr:
				m := e.(*kafka.Message)
				if m.TopicPartition.Error != nil {
					pr.t.Fatalf("delivery: %v", m.TopicPartition.Error)
				}
				dm, derr := telemetry.Decode(m.Key, m.Value)
				out = append(out, record{partition: m.TopicPartition.Partition, offset: int64(m.TopicPartition.Offset),
					key: m.Key, value: m.Value, msg: dm, err: derr})
				pending--
			case <-time.After(30 * time.Second):
				pr.t.Fatal("deliveries not confirmed within 30s")
			}
		}
	}
	for _, kv := range kvs {
		err := pr.p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &tp, Partition: kafka.PartitionAny},
			Key: kv[0], Value: kv[1]}, pr.dr)
		if err != nil {
			pr.t.Fatal(err)
		}
		pending++
		flush(false)
	}
	flush(true)
	return out
}

// awaitSnapshot polls the reader until cond holds or the deadline passes.
func awaitSnapshot(t *testing.T, r *Reader, d time.Duration, what string, cond func(Truth) bool) Truth {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		truth := r.Snapshot()
		if cond(truth) {
			return truth
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last snapshot: read %d, partitions %+v, err %q",
				d, what, truth.Read(), truth.Partitions, truth.Err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
}

func runReader(t *testing.T, addr string) (*Reader, func()) {
	t.Helper()
	return runReaderOf(t, addr, topic)
}

func runReaderOf(t *testing.T, addr, topicName string) (*Reader, func()) {
	t.Helper()
	r, err := NewReader(addr, topicName, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of cancel")
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("Run took %v to return after cancel", took)
		}
	}
	t.Cleanup(stop)
	return r, stop
}

// checkAgainst compares the reader's truth with a naive recomputation from
// the records the producer stored.
func checkAgainst(t *testing.T, truth Truth, recs []record, sensors []string) {
	t.Helper()
	var valid, invalid int64
	for _, id := range sensors {
		st, ok := truth.Sensor(id)
		if !ok {
			t.Fatalf("%s missing from the truth", id)
		}
		var last *record
		for i := range recs {
			r := &recs[i]
			if r.err == nil && r.msg.SensorID == id {
				last = r // delivery order within a partition is offset order
			}
		}
		var sv, si int64
		for p := range int32(3) {
			want, v, inv := naiveUsage(recs, id, p, -1, -1)
			sv += v
			si += inv
			got, ok := truth.ExpectedUsage(id, p, -1)
			if ok != (v > 0) || got != want {
				t.Fatalf("%s p%d: expected usage %+v ok=%v, naive %+v", id, p, got, ok, want)
			}
		}
		if st.Valid != sv || st.Invalid != si || st.Partitions != 1 {
			t.Fatalf("%s: %+v, want valid %d invalid %d in one partition", id, st, sv, si)
		}
		if last == nil || !st.HasLast || st.Last.Partition != last.partition || st.Last.Offset != last.offset || st.Last.Message != last.msg {
			t.Fatalf("%s: last %+v, want %+v", id, st.Last, last)
		}
		valid += sv
		invalid += si
	}
	if truth.Valid != valid || truth.Read() != int64(len(recs)) {
		t.Fatalf("topic: valid %d read %d, want valid %d of %d", truth.Valid, truth.Read(), valid, len(recs))
	}
}

func TestReaderAgainstBroker(t *testing.T) {
	addr, topicName := embeddedtest.Broker(t, topic)
	pr := newProducerTo(t, addr, topicName)

	sensors := []string{"sensor-01", "sensor-02", "sensor-03", "sensor-04", "sensor-05"}
	hours := map[string]float64{}
	ts := int64(1_700_000_000_000)
	batch := func(rounds int, withBad bool) [][2][]byte {
		var kvs [][2][]byte
		for i := range rounds {
			for j, id := range sensors {
				ts += 100
				if i%3 != 1 || j%2 == 0 { // some idle readings
					hours[id] += 0.013 * float64(j+1)
				}
				kvs = append(kvs, [2][]byte{[]byte(id), encode(t, id, ts, hours[id], hours[id]*40)})
			}
			if withBad && i == rounds/2 {
				kvs = append(kvs,
					[2][]byte{[]byte("sensor-02"), []byte(`{"sensor_id":"sensor-02","timestamp":`)},
					[2][]byte{[]byte("sensor-03"), encode(t, "sensor-03", ts, hours["sensor-03"]/2, 0)}, // backwards
					[2][]byte{nil, []byte("not even json")},
				)
			}
		}
		return kvs
	}

	recs := pr.send(batch(40, true))
	r, stop := runReaderOf(t, addr, topicName)
	truth := awaitSnapshot(t, r, 20*time.Second, "the first batch", func(tr Truth) bool {
		return tr.CaughtUp() && tr.Read() == int64(len(recs))
	})
	checkAgainst(t, truth, recs, sensors)
	if truth.Unattributed != 1 || truth.Err != "" || len(truth.Partitions) != 3 {
		t.Fatalf("unattributed %d, err %q, partitions %+v", truth.Unattributed, truth.Err, truth.Partitions)
	}
	if st, _ := truth.Sensor("sensor-03"); st.Backwards != 1 {
		t.Fatalf("sensor-03 backwards %d", st.Backwards)
	}

	// The reader tails: records produced later arrive, and the earlier
	// snapshot is unaffected.
	before, _ := truth.ExpectedUsage("sensor-01", truth.sensorPartition(t, "sensor-01"), -1)
	recs = append(recs, pr.send(batch(30, false))...)
	truth2 := awaitSnapshot(t, r, 20*time.Second, "the second batch", func(tr Truth) bool {
		return tr.CaughtUp() && tr.Read() == int64(len(recs))
	})
	checkAgainst(t, truth2, recs, sensors)
	if again, _ := truth.ExpectedUsage("sensor-01", truth.sensorPartition(t, "sensor-01"), -1); again != before {
		t.Fatalf("old snapshot moved: %+v -> %+v", before, again)
	}
	stop()

	// The reader never joined or committed a group: none carries the
	// audit's prefix.
	o, err := kafka.NewAdminClient(kafkacfgtest.Admin(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := o.ListConsumerGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Valid {
		if strings.HasPrefix(g.GroupID, kafkacfg.AuditGroupPrefix) {
			t.Fatalf("audit group %s exists on the broker", g.GroupID)
		}
	}
}

// sensorPartition returns the partition the sensor's messages live in.
func (t Truth) sensorPartition(tb testing.TB, id string) int32 {
	st, ok := t.Sensor(id)
	if !ok || !st.HasLast {
		tb.Fatalf("no valid message of %s", id)
	}
	return st.Last.Partition
}

func TestReaderHundredThousandMessages(t *testing.T) {
	addr := embeddedtest.StartBroker(t, topic, 3)
	pr := newProducer(t, addr)
	const sensors, per = 20, 5000
	kvs := make([][2][]byte, 0, sensors*per)
	for i := range per {
		for s := range sensors {
			id := fmt.Sprintf("sensor-%02d", s)
			kvs = append(kvs, [2][]byte{[]byte(id), encode(t, id, 1_700_000_000_000+int64(i), float64(i)*0.01, float64(i)*0.5)})
		}
	}
	start := time.Now()
	pr.send(kvs)
	produced := time.Since(start)

	start = time.Now()
	r, _ := runReader(t, addr)
	truth := awaitSnapshot(t, r, 60*time.Second, "100k messages", func(tr Truth) bool {
		return tr.CaughtUp() && tr.Read() == sensors*per
	})
	t.Logf("produced 100k in %v, audit caught up in %v", produced.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	for s := range sensors {
		id := fmt.Sprintf("sensor-%02d", s)
		got, ok := truth.ExpectedUsage(id, truth.sensorPartition(t, id), -1)
		if !ok || got.Records != per-1 || got.HoursCents != per-1 || got.KmCents != 50*(per-1) {
			t.Fatalf("%s: %+v", id, got)
		}
	}
}

func TestReaderUnreachableBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	r, stop := runReader(t, addr)
	truth := awaitSnapshot(t, r, 10*time.Second, "an error in the snapshot", func(tr Truth) bool { return tr.Err != "" })
	if truth.CaughtUp() || truth.Read() != 0 {
		t.Fatalf("unexpected truth %+v", truth)
	}
	t.Logf("reported: %s", truth.Err)
	stop() // checks Run returns promptly while it is retrying
}

func TestReaderWaitsForTopicAndBroker(t *testing.T) {
	// A broker that comes up after the reader started (the dashboard starts
	// both at once): the reader retries and then reads from the beginning.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, _ := runReader(t, addr)
	awaitSnapshot(t, r, 10*time.Second, "an error in the snapshot", func(tr Truth) bool { return tr.Err != "" })

	embeddedtest.StartBrokerOn(t, addr, topic, 3)
	recs := newProducer(t, addr).send([][2][]byte{
		{[]byte("s"), encode(t, "s", 1_700_000_000_000, 1, 1)},
		{[]byte("s"), encode(t, "s", 1_700_000_000_001, 2, 3)},
	})
	truth := awaitSnapshot(t, r, 20*time.Second, "the records after the broker came up", func(tr Truth) bool {
		return tr.CaughtUp() && tr.Read() == 2 && tr.Err == ""
	})
	got, _ := truth.ExpectedUsage("s", recs[0].partition, -1)
	if got.HoursCents != 100 || got.KmCents != 200 || got.Records != 1 {
		t.Fatalf("usage %+v", got)
	}
}

// TestSnapshotWhen: a waiter is woken by the records the reader reads (no
// polling interval of its own), and gets the latest snapshot at its timeout.
func TestSnapshotWhen(t *testing.T) {
	addr, topicName := embeddedtest.Broker(t, topic)
	pr := newProducerTo(t, addr, topicName)
	r, stop := runReaderOf(t, addr, topicName)
	defer stop()
	ts := int64(1_700_000_000_000)
	kvs := func(n int) [][2][]byte {
		var out [][2][]byte
		for i := range n {
			ts += 100
			out = append(out, [2][]byte{[]byte("sensor-01"), encode(t, "sensor-01", ts, float64(i), float64(i)*10)})
		}
		return out
	}
	ctx := context.Background()
	// Nothing will reach 1,000 records: the timeout answers with the latest.
	began := time.Now()
	if got := r.SnapshotWhen(ctx, 300*time.Millisecond, func(tr Truth) bool { return tr.Read() >= 1000 }); got.Read() >= 1000 {
		t.Fatalf("read %d of nothing", got.Read())
	}
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Fatalf("returned after %s, before its timeout", took)
	}
	// The reader reads the topic at all: on a topic just created on Apache
	// Kafka its first fetches can wait for the topic's metadata, which is
	// not what this test is about.
	pr.send(kvs(1))
	if got := r.SnapshotWhen(ctx, 60*time.Second, func(tr Truth) bool { return tr.Read() >= 1 }); got.Read() < 1 {
		t.Fatalf("the reader read nothing of the first record within 60s (err %q)", got.Err)
	}
	// Records sent while it waits end the wait as soon as they are read.
	done := make(chan Truth, 1)
	go func() {
		done <- r.SnapshotWhen(ctx, 30*time.Second, func(tr Truth) bool { return tr.Read() >= 51 })
	}()
	pr.send(kvs(50))
	select {
	case got := <-done:
		if got.Read() < 51 {
			t.Fatalf("woken with %d records read, want 51", got.Read())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("SnapshotWhen was not woken by the records read")
	}
}
