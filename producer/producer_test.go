package producer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

const testTopic = "sensor-data"

// events collects a role's status lines.
type events struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	all     []status.Event
	changed chan struct{} // closed and replaced on every new event
}

func (e *events) wakeup() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	return e.changed
}

func (e *events) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf.Write(p)
	for {
		line, err := e.buf.ReadBytes('\n')
		if err != nil {
			e.buf.Write(line)
			break
		}
		if ev, err := status.Parse(line); err == nil {
			e.all = append(e.all, ev)
			if e.changed != nil {
				close(e.changed)
				e.changed = nil
			}
		}
	}
	return len(p), nil
}

func (e *events) find(pred func(status.Event) bool) (status.Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.all {
		if pred(ev) {
			return ev, true
		}
	}
	return status.Event{}, false
}

func (e *events) await(t *testing.T, what string, pred func(status.Event) bool, timeout time.Duration) status.Event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		wake := e.wakeup()
		if ev, ok := e.find(pred); ok {
			return ev
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("no %s event within %s", what, timeout)
		}
	}
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// startBroker runs the embedded broker in this process for the test.
func startBroker(t *testing.T) string {
	t.Helper()
	addr, _ := brokerAt(t, "127.0.0.1:0", t.TempDir())
	return addr
}

// readAll reads the topic from the start to the high watermarks.
func readAll(t *testing.T, brokers string) []*kafka.Message {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfg.Audit(brokers, "producer-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	topic := testTopic
	var assign []kafka.TopicPartition
	want := 0
	for p := range int32(3) {
		low, high, err := c.QueryWatermarkOffsets(topic, p, 5000)
		if err != nil {
			t.Fatal(err)
		}
		want += int(high - low)
		assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.Offset(low)})
	}
	if err := c.Assign(assign); err != nil {
		t.Fatal(err)
	}
	var out []*kafka.Message
	deadline := time.Now().Add(20 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		if m, ok := c.Poll(100).(*kafka.Message); ok {
			out = append(out, m)
		}
	}
	if len(out) != want {
		t.Fatalf("read %d of %d records", len(out), want)
	}
	return out
}

func lastPerSensor(t *testing.T, msgs []*kafka.Message) (map[string]telemetry.Message, map[string]int) {
	t.Helper()
	last := map[string]telemetry.Message{}
	count := map[string]int{}
	// Records of one key share a partition, and Poll returns a partition in order.
	for _, r := range msgs {
		m, err := telemetry.Decode(r.Key, r.Value)
		if err != nil {
			t.Fatalf("record at %v is invalid: %v", r.TopicPartition, err)
		}
		if prev, ok := last[m.SensorID]; ok {
			if err := telemetry.CheckSuccessor(prev, m); err != nil {
				t.Fatalf("%s: %v", m.SensorID, err)
			}
		}
		last[m.SensorID] = m
		count[m.SensorID]++
	}
	return last, count
}

func runProducer(t *testing.T, cfg Config) *events {
	t.Helper()
	sink := &events{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Run(ctx, cfg, status.NewTo(Role, sink), testLog(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run did not finish its --count")
	}
	return sink
}

func TestProducesAndContinuesAfterRestart(t *testing.T) {
	brokers := startBroker(t)
	cfg := Config{Brokers: brokers, Topic: testTopic, Sensors: 4, Interval: 5 * time.Millisecond, Seed: 11, Count: 20}

	sink := runProducer(t, cfg)
	if _, ok := sink.find(func(e status.Event) bool { return e.Type == status.Progress && e.Produced == 80 }); !ok {
		t.Fatalf("no progress event reporting 80 delivered: %+v", sink.all)
	}
	first, count := lastPerSensor(t, readAll(t, brokers))
	if len(first) != 4 {
		t.Fatalf("sensors in topic: %d", len(first))
	}
	for id, n := range count {
		if n != 20 {
			t.Fatalf("%s: %d messages, want 20", id, n)
		}
	}

	// Same seed again: the values must continue, not restart at the
	// seed's initial counters (which are below what is in the topic).
	runProducer(t, cfg)
	all := readAll(t, brokers)
	last, count := lastPerSensor(t, all) // fails on any backwards step
	for id, n := range count {
		if n != 40 {
			t.Fatalf("%s: %d messages, want 40", id, n)
		}
	}
	for id, m := range last {
		if m.Odometry.HoursTot <= first[id].Odometry.HoursTot && m.Odometry.KmTot <= first[id].Odometry.KmTot {
			// Possible only if the machine idled all 20 steps: not with seed 11.
			t.Errorf("%s did not advance after restart: %+v then %+v", id, first[id].Odometry, m.Odometry)
		}
	}

	// The resume reader itself sees the newest counters.
	got, err := LoadLast(context.Background(), brokers, testTopic, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	for id, m := range last {
		if got[id].Odometry != m.Odometry || got[id].Position != m.Position {
			t.Errorf("LoadLast %s = %+v, want %+v", id, got[id], m)
		}
	}
}

func TestPauseResumeAndStop(t *testing.T) {
	brokers := startBroker(t)
	control := make(chan Control)
	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Brokers: brokers, Topic: testTopic, Sensors: 2, Interval: 10 * time.Millisecond, Seed: 3, Control: control},
			status.NewTo(Role, sink), testLog(t))
	}()
	returned := false
	defer func() {
		if !returned {
			cancel()
			<-done
		}
	}()
	sink.await(t, "progress", func(e status.Event) bool { return e.Type == status.Progress && e.Produced > 0 }, 20*time.Second)
	control <- Pause
	paused := sink.await(t, "paused", func(e status.Event) bool { return e.Type == status.Paused }, 10*time.Second)
	// Paused is emitted after a flush: everything sent so far is in the topic.
	if n := len(readAll(t, brokers)); int64(n) != paused.Produced {
		t.Fatalf("paused with %d delivered, topic has %d", paused.Produced, n)
	}
	control <- Resume
	sink.await(t, "resumed", func(e status.Event) bool { return e.Type == status.Resumed }, 10*time.Second)
	sink.await(t, "progress after resume", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced > paused.Produced
	}, 10*time.Second)
	cancel()
	select {
	case err := <-done:
		returned = true
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	sink.await(t, "stopping", func(e status.Event) bool { return e.Type == status.Stopping }, time.Second)
}

func TestUnreachableBrokerRetriesAndStops(t *testing.T) {
	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Brokers: "127.0.0.1:1", Topic: testTopic, Sensors: 1, Interval: time.Second},
			status.NewTo(Role, sink), testLog(t))
	}()
	sink.await(t, "retrying", func(e status.Event) bool { return e.Type == status.Retrying && e.Endpoint == "kafka" }, 15*time.Second)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return promptly after cancel")
	}
}

// TestPreload: the backlog is perSensor messages per sensor, back-dated one
// interval apart up to now, and Run continues after it without a step back.
func TestPreload(t *testing.T) {
	brokers := startBroker(t)
	cfg := Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: time.Second, Seed: 5}
	before := time.Now()
	if err := Preload(context.Background(), cfg, 2000, status.NewTo(Role, &events{}), testLog(t)); err != nil {
		t.Fatalf("Preload: %v", err)
	}
	msgs := readAll(t, brokers)
	if len(msgs) != 6000 {
		t.Fatalf("topic has %d records, want 6000", len(msgs))
	}
	_, count := lastPerSensor(t, msgs) // fails on any backwards step
	first := map[string]int64{}
	for _, r := range msgs {
		if m, err := telemetry.Decode(r.Key, r.Value); err == nil {
			if _, ok := first[m.SensorID]; !ok {
				first[m.SensorID] = m.Timestamp
			}
		}
	}
	for id, n := range count {
		if n != 2000 {
			t.Errorf("%s: %d messages, want 2000", id, n)
		}
		// 2000 messages one second apart: the first is about 1999 s old.
		if age := before.Sub(time.UnixMilli(first[id])); age < 1990*time.Second || age > 2010*time.Second {
			t.Errorf("%s: the first message is %s old, want about 1999s", id, age)
		}
	}

	cfg.Count, cfg.Interval = 5, 5*time.Millisecond
	runProducer(t, cfg)
	if _, count := lastPerSensor(t, readAll(t, brokers)); count["sensor-01"] != 2005 {
		t.Fatalf("after Run: %v", count)
	}
}

// After a fatal error the producer is replaced and the board shows it
// retrying; its first delivery must say it is connected again, or a
// producer publishing fine would stay "retrying" on screen.
func TestRecoveryFromAFatalErrorReportsConnected(t *testing.T) {
	brokers := startBroker(t)
	sink := &events{}
	cfg := Config{Brokers: brokers, Topic: testTopic, Sensors: 1, Interval: time.Second}
	pub, err := newPublisher(cfg, status.NewTo(Role, sink), testLog(t), true)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.close()
	fleet := NewFleet(1, 1, nil)
	pub.produce(fleet.Next(0, time.Now()))
	if left := pub.flush(context.Background(), 30*time.Second); left != 0 || pub.delivered.Load() != 1 {
		t.Fatalf("first message: %d unflushed, %d delivered", left, pub.delivered.Load())
	}
	if err := pub.recoverFrom(errors.New("test: fatal error")); err != nil {
		t.Fatal(err)
	}
	sink.await(t, "recovering", func(e status.Event) bool { return e.Type == status.Recovering }, 5*time.Second)
	pub.produce(fleet.Next(0, time.Now()))
	// Nothing said connected before: the publisher alone emits only on a change.
	sink.await(t, "connected after the recovery", func(e status.Event) bool { return e.Type == status.Connected }, 30*time.Second)
	if n := pub.delivered.Load(); n != 2 {
		t.Fatalf("%d delivered, want 2", n)
	}
}

// A preload into a topic nobody created creates it (3 partitions) instead
// of waiting for it for ever, as it did before.
func TestPreloadCreatesItsTopic(t *testing.T) {
	brokers := startBroker(t)
	cfg := Config{Brokers: brokers, Topic: "preload-fresh", Sensors: 3, Interval: time.Second, Seed: 5}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Preload(ctx, cfg, 10, status.NewTo(Role, &events{}), testLog(t)); err != nil {
		t.Fatalf("Preload: %v", err)
	}
	o, err := observe.NewOffsets(brokers, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if created, err := o.EnsureTopic(ctx, cfg.Topic, 3); err != nil || created {
		t.Fatalf("the topic after the preload: created again %v, %v", created, err)
	}
}

// TestProgressReportsEachBatchOnceAcknowledged: "sent" keeps up with the
// topic: a Progress with the new total comes right after a batch's last
// acknowledgement, not at the next progress tick (which fires in step with
// the send tick, before the batch it just sent is acknowledged).
func TestProgressReportsEachBatchOnceAcknowledged(t *testing.T) {
	brokers := startBroker(t)
	sink := &events{}
	acks := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	const sensors, batches = 3, 4
	go func() {
		done <- Run(ctx, Config{Brokers: brokers, Topic: testTopic, Sensors: sensors, Interval: time.Second, Seed: 5, LogAcks: true},
			status.NewTo(Role, sink), slog.New(slog.NewJSONHandler(acks, nil)))
	}()
	defer func() { cancel(); <-done }()
	sink.await(t, "progress", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced >= sensors*batches
	}, 30*time.Second)

	var ackedAt []time.Time // the nth acknowledgement's time
	for _, line := range strings.Split(acks.String(), "\n") {
		var rec struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "acked" {
			ackedAt = append(ackedAt, rec.Time)
		}
	}
	if len(ackedAt) < sensors*batches {
		t.Fatalf("%d acknowledgements logged, want at least %d", len(ackedAt), sensors*batches)
	}
	for k := 1; k <= batches; k++ {
		last := ackedAt[k*sensors-1]
		ev, _ := sink.find(func(e status.Event) bool { return e.Type == status.Progress && e.Produced >= int64(k*sensors) })
		if late := ev.Time.Sub(last); late > 500*time.Millisecond {
			t.Errorf("batch %d: acknowledged at %s, reported %s later (Progress %d)", k, last.Format("15:04:05.000"), late, ev.Produced)
		}
	}
}

// TestHistoryRequest: a history request to a running producer publishes
// whole rounds of the sensors (rounded up), the fleet's next messages with
// no step back, and replies once they are delivered.
func TestHistoryRequest(t *testing.T) {
	brokers := startBroker(t)
	history := make(chan HistoryRequest)
	cfg := Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: time.Hour, Seed: 9, HTTP: "", History: history}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, status.NewTo(Role, &events{}), testLog(t)) }()
	req := HistoryRequest{N: 25, Reply: make(chan HistoryResult, 1)}
	select {
	case history <- req:
	case <-time.After(60 * time.Second):
		t.Fatal("the producer took no history request")
	}
	res := <-req.Reply
	if res.Error != "" || res.Delivered != 27 {
		t.Fatalf("history: %+v, want 27 delivered (9 rounds of 3 sensors)", res)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, count := lastPerSensor(t, readAll(t, brokers)) // fails on any backwards step
	// The first tick is an hour away: the topic holds the burst alone.
	for id, n := range count {
		if n != 9 {
			t.Errorf("%s: %d messages, want 9", id, n)
		}
	}
	if len(count) != 3 {
		t.Errorf("%d sensors in the topic, want 3", len(count))
	}
}

// TestHistoryStopsWithItsAsker: a burst whose asker gave up (its request's
// context ended: a scenario stopped midway) stops, and everything it
// enqueued is in the topic before the reply, so a consumer started at the
// end of the topic next sees no history land after it.
func TestHistoryStopsWithItsAsker(t *testing.T) {
	brokers := startBroker(t)
	history := make(chan HistoryRequest)
	cfg := Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: time.Hour, Seed: 9, History: history}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, status.NewTo(Role, &events{}), testLog(t)) }()
	asker, giveUp := context.WithCancel(context.Background())
	giveUp()
	req := HistoryRequest{N: 3_000_000, Reply: make(chan HistoryResult, 1), Ctx: asker}
	select {
	case history <- req:
	case <-time.After(60 * time.Second):
		t.Fatal("the producer took no history request")
	}
	res := <-req.Reply
	if res.Error == "" || res.Delivered >= int64(req.N) {
		t.Fatalf("history of an asker that gave up: %+v, want it stopped with an error", res)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, count := lastPerSensor(t, readAll(t, brokers))
	var n int64
	for _, c := range count {
		n += int64(c)
	}
	if n != res.Delivered {
		t.Errorf("the topic holds %d messages, the reply said %d delivered", n, res.Delivered)
	}
}
