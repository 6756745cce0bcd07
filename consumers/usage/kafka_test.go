package usage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kafkacfgtest"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// childEnv makes the test binary run Main instead of the tests (see
// TestMain): a crash point's SIGKILL then kills a child, not the tests.
const childEnv = "KRL_USAGE_TEST_CHILD"

func createTopic(t *testing.T, brokers string) string {
	t.Helper()
	topic := "usage-test-" + randHex(4)
	admin, err := kafka.NewAdminClient(kafkacfgtest.Admin(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Error.Code() != kafka.ErrNoError {
		t.Fatal(res[0].Error)
	}
	return topic
}

// batch is produced data and the records as the truth sees them.
type batch struct {
	recs  []Record // Partition/Offset unused: only per-sensor order matters
	valid int
}

// sensorData continues each sensor's odometers across batches.
type sensorData struct {
	rng   *rand.Rand
	hours map[string]int64
	km    map[string]int64
	i     map[string]int
}

func newSensorData(seed uint64) *sensorData {
	return &sensorData{rng: rand.New(rand.NewPCG(seed, 7)), hours: map[string]int64{}, km: map[string]int64{}, i: map[string]int{}}
}

// next makes perSensor readings for each of sensors, interleaved, with a
// garbage value every 17th record.
func (d *sensorData) next(t *testing.T, sensors, perSensor int) batch {
	var b batch
	for round := 0; round < perSensor; round++ {
		for s := 0; s < sensors; s++ {
			id := fmt.Sprintf("sensor-%02d", s)
			if len(b.recs)%17 == 16 {
				b.recs = append(b.recs, Record{Key: []byte(id), Value: []byte(`{"sensor_id":"` + id + `"}`)})
			}
			if _, ok := d.hours[id]; !ok {
				d.hours[id], d.km[id] = 1000+d.rng.Int64N(5000), 10000+d.rng.Int64N(50000)
			} else if d.rng.IntN(6) > 0 {
				d.hours[id] += d.rng.Int64N(200)
				d.km[id] += d.rng.Int64N(1500)
			}
			b.recs = append(b.recs, Record{Key: []byte(id), Value: reading(t, id, d.i[id], d.hours[id], d.km[id])})
			d.i[id]++
			b.valid++
		}
	}
	return b
}

func produce(t *testing.T, brokers, topic string, b batch) {
	t.Helper()
	p, err := kafka.NewProducer(kafkacfg.Producer(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	delivery := make(chan kafka.Event, len(b.recs))
	for _, r := range b.recs {
		err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key: r.Key, Value: r.Value}, delivery)
		if err != nil {
			t.Fatal(err)
		}
	}
	for range b.recs {
		select {
		case ev := <-delivery:
			if m := ev.(*kafka.Message); m.TopicPartition.Error != nil {
				t.Fatal(m.TopicPartition.Error)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no delivery report within 30s")
		}
	}
}

// truth is the expected usage of batches read once in order.
func truth(t *testing.T, batches ...batch) map[string]store.Totals {
	var all []Record
	for _, b := range batches {
		all = append(all, b.recs...)
	}
	return expectedTotals(t, genLog{parts: [][]Record{all}})
}

// runningConsumer is Run in this process.
type runningConsumer struct {
	sink   *eventSink
	cancel context.CancelFunc
	done   chan error
}

func startConsumer(t *testing.T, cfg Config) *runningConsumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rc := &runningConsumer{sink: &eventSink{}, cancel: cancel, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() { rc.done <- Run(ctx, cfg, status.NewTo(Role, rc.sink), log) }()
	t.Cleanup(func() { rc.stop(t) })
	return rc
}

func (rc *runningConsumer) stop(t *testing.T) {
	t.Helper()
	if rc.cancel == nil {
		return
	}
	rc.cancel()
	rc.cancel = nil
	select {
	case err := <-rc.done:
		if err != nil {
			t.Errorf("Run returned %v after cancel, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// caughtUp waits for a Progress event with every partition at its high
// watermark, after processed+invalid reached want, and returns it.
func caughtUp(t *testing.T, sink *eventSink, want int64, within time.Duration) status.Event {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		evs := sink.events()
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			if ev.Type != status.Progress {
				continue
			}
			if ev.Processed+ev.Invalid >= want && len(ev.Positions) == 3 && atEnd(ev.Positions) {
				return ev
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not caught up to %d messages within %v; events: %s", want, within, dump(evs))
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
}

func atEnd(ps []status.Position) bool {
	for _, p := range ps {
		if p.HighWatermark < 0 || p.Offset != p.HighWatermark {
			return false
		}
	}
	return true
}

func dump(evs []status.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		j, _ := json.Marshal(ev)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// The guarded consumer against a real broker: replay from earliest, a clean
// stop, a resume from the committed offsets, and a replay with a fresh
// group: totals exact at every step.
func TestKafkaGuardedRestartsStayExact(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	uri, st := freshDB(t)
	data := newSensorData(1)
	b1 := data.next(t, 5, 12)
	produce(t, brokers, topic, b1)
	group := "usage-test-" + randHex(4)
	cfg := Config{Conn: cli.Conn{Brokers: brokers, Mongo: uri, Topic: topic}, HTTP: "127.0.0.1:0",
		Mode: lesson.Guarded, Reset: "earliest", Group: group, GroupExplicit: true, CrashAfter: 1}

	start := time.Now()
	c1 := startConsumer(t, cfg)
	ev := caughtUp(t, c1.sink, int64(len(b1.recs)), 60*time.Second)
	t.Logf("first run caught up in %v", time.Since(start).Round(time.Millisecond))
	if ev.Processed != int64(b1.valid) || ev.Invalid != int64(len(b1.recs)-b1.valid) {
		t.Errorf("first run: processed %d invalid %d, want %d and %d", ev.Processed, ev.Invalid, b1.valid, len(b1.recs)-b1.valid)
	}
	sameTotals(t, "first run", totalsOf(t, st), truth(t, b1))
	if s, ok := c1.sink.first(status.Started); !ok || s.GroupID != group || s.Mode != "guarded" || s.Reset != "earliest" {
		t.Errorf("started event %+v", s)
	}
	c1.stop(t)
	if _, ok := c1.sink.first(status.Stopping); !ok {
		t.Error("no stopping event")
	}

	// Same group: resumes from the offsets committed at the clean stop.
	b2 := data.next(t, 5, 4)
	produce(t, brokers, topic, b2)
	start = time.Now()
	c2 := startConsumer(t, cfg)
	ev = caughtUp(t, c2.sink, int64(len(b2.recs)), 60*time.Second)
	t.Logf("resume caught up in %v", time.Since(start).Round(time.Millisecond))
	if ev.Processed != int64(b2.valid) {
		t.Errorf("resume processed %d messages, want exactly the %d new ones", ev.Processed, b2.valid)
	}
	sameTotals(t, "after resume", totalsOf(t, st), truth(t, b1, b2))
	c2.stop(t)

	// A fresh group from earliest replays everything: nothing changes.
	cfg.GroupExplicit = false
	start = time.Now()
	c3 := startConsumer(t, cfg)
	all := int64(len(b1.recs) + len(b2.recs))
	ev = caughtUp(t, c3.sink, all, 60*time.Second)
	t.Logf("replay caught up in %v", time.Since(start).Round(time.Millisecond))
	if s, _ := c3.sink.first(status.Started); !strings.HasPrefix(s.GroupID, EarliestGroupPrefix) || len(s.GroupID) != len(EarliestGroupPrefix)+8 {
		t.Errorf("fresh earliest group %q", s.GroupID)
	}
	if ev.Processed != int64(b1.valid+b2.valid) {
		t.Errorf("replay processed %d, want %d", ev.Processed, b1.valid+b2.valid)
	}
	sameTotals(t, "after replay", totalsOf(t, st), truth(t, b1, b2))
	c3.stop(t)

	// The article's rule the other way: the naive consumer replaying from
	// earliest counts every delta a second time.
	cfg.Mode = lesson.Naive
	c4 := startConsumer(t, cfg)
	caughtUp(t, c4.sink, all, 60*time.Second)
	doubled := truth(t, b1, b2)
	for s, tot := range doubled {
		doubled[s] = store.Totals{HoursCents: 2 * tot.HoursCents, KmCents: 2 * tot.KmCents, Records: 2 * tot.Records}
	}
	sameTotals(t, "after naive replay", totalsOf(t, st), doubled)
	c4.stop(t)
}

// child is the consumer as a real process: the test binary running Main.
type child struct {
	cmd    *exec.Cmd
	sink   *eventSink
	stderr *syncBuffer
	exited chan struct{}
}

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, sink: &eventSink{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.sink.Write(sc.Bytes())
		}
	})
	go func() {
		wg.Wait()
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitKilled waits for the child to die of SIGKILL after a CrashPoint event.
func (c *child) waitKilled(t *testing.T, point lesson.CrashPoint) status.Event {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("child still running after 60s; stderr:\n%s", c.stderr)
	}
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL; stderr:\n%s", c.cmd.ProcessState, c.stderr)
	}
	ev, found := c.sink.first(status.CrashPoint)
	if !found || ev.Point != string(point) {
		t.Fatalf("crash event %+v (found %v), want point %s", ev, found, point)
	}
	return ev
}

func (c *child) waitEvent(t *testing.T, typ status.Type, within time.Duration) status.Event {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if ev, ok := c.sink.first(typ); ok {
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event within %v; stderr:\n%s", typ, within, c.stderr)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// Real crashes: a child process SIGKILLs itself at each crash point (one
// armed by flag, one over HTTP); a replay from earliest afterwards must
// leave exact totals.
func TestKafkaGuardedRealCrashes(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	uri, st := freshDB(t)
	data := newSensorData(2)
	b1 := data.next(t, 5, 10)
	produce(t, brokers, topic, b1)
	conn := []string{"--brokers", brokers, "--mongo", uri, "--topic", topic, "--mode", "guarded", "--reset", "earliest"}

	a := startChild(t, append(conn, "--crash-at", "after-delta", "--crash-after", "12")...)
	crash := a.waitKilled(t, lesson.AfterDelta)
	t.Logf("child A crashed at %+v", crash)
	if got := recordedTotals(t, st); sumRecords(got) != 12 { // the 12th is an orphan: not in a summary yet
		t.Errorf("%d usage records after crashing at the 12th delta, want 12", sumRecords(got))
	}

	b := startChild(t, conn...)
	hl := b.waitEvent(t, status.Listening, 30*time.Second)
	caughtUp(t, b.sink, int64(len(b1.recs)), 60*time.Second)
	sameTotals(t, "after replay by child B", totalsOf(t, st), truth(t, b1))
	url := "http://" + hl.Addr + "/crash-at?point="
	if code, body := post(t, url+"after-nothing"); code != http.StatusBadRequest {
		t.Errorf("bad point: %d %s, want 400", code, body)
	}
	if code, body := post(t, url+"after-checkpoint&after=3"); code != http.StatusOK ||
		!strings.Contains(body, `"point":"after-checkpoint"`) || !strings.Contains(body, `"after":3`) {
		t.Errorf("arm: %d %s, want 200 with the armed point", code, body)
	}
	b2 := data.next(t, 5, 3)
	produce(t, brokers, topic, b2)
	crash = b.waitKilled(t, lesson.AfterCheckpoint)
	t.Logf("child B crashed at %+v", crash)

	c := startConsumer(t, Config{Conn: cli.Conn{Brokers: brokers, Mongo: uri, Topic: topic}, HTTP: "127.0.0.1:0",
		Mode: lesson.Guarded, Reset: "earliest", Group: kafkacfg.UsageGroupID, CrashAfter: 1})
	caughtUp(t, c.sink, int64(len(b1.recs)+len(b2.recs)), 60*time.Second)
	sameTotals(t, "after both crashes", totalsOf(t, st), truth(t, b1, b2))
}

func sumRecords(m map[string]store.Totals) int64 {
	var n int64
	for _, t := range m {
		n += t.Records
	}
	return n
}

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Unreachable dependencies: a clear Retrying event, and a prompt clean stop.
func TestUnreachableDependenciesRetry(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint string
		conn           func() cli.Conn
	}{
		{"store", "mongo", func() cli.Conn {
			return cli.Conn{Brokers: "127.0.0.1:1", Mongo: "mongodb://127.0.0.1:1/x", Topic: testTopic}
		}},
		{"broker", "kafka", func() cli.Conn {
			uri, _ := freshDB(t)
			return cli.Conn{Brokers: "127.0.0.1:1", Mongo: uri, Topic: testTopic}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := startConsumer(t, Config{Conn: tc.conn(), HTTP: "127.0.0.1:0", Mode: lesson.Guarded, Reset: "latest",
				Group: kafkacfg.UsageGroupID, CrashAfter: 1})
			deadline := time.Now().Add(20 * time.Second)
			for {
				if ev, ok := rc.sink.first(status.Retrying); ok {
					if ev.Endpoint != tc.endpoint || ev.Error == "" {
						t.Fatalf("retrying event %+v, want endpoint %s with an error", ev, tc.endpoint)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no retrying event within 20s: %s", dump(rc.sink.events()))
				}
				time.Sleep(20 * time.Millisecond) // poll interval
			}
			start := time.Now()
			rc.stop(t)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("stop took %v", took)
			}
			if _, ok := rc.sink.first(status.Stopping); !ok {
				t.Error("no stopping event")
			}
		})
	}
}

// SIGTERM on the real process: a clean exit 0 that commits exactly what
// was applied, so the same group resumes with nothing to redo.
func TestKafkaSIGTERMCommitsAndExits(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	uri, st := freshDB(t)
	b1 := newSensorData(3).next(t, 4, 6)
	produce(t, brokers, topic, b1)
	group := "usage-term-" + randHex(4)
	conn := []string{"--brokers", brokers, "--mongo", uri, "--topic", topic, "--mode", "guarded",
		"--reset", "earliest", "--group", group}
	a := startChild(t, conn...)
	caughtUp(t, a.sink, int64(len(b1.recs)), 60*time.Second)
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30s of SIGTERM; stderr:\n%s", a.stderr)
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, a.stderr)
	}
	if _, ok := a.sink.first(status.Stopping); !ok {
		t.Error("no stopping event")
	}

	c := startConsumer(t, Config{Conn: cli.Conn{Brokers: brokers, Mongo: uri, Topic: topic}, HTTP: "127.0.0.1:0",
		Mode: lesson.Guarded, Reset: "earliest", Group: group, GroupExplicit: true, CrashAfter: 1})
	if ev := caughtUp(t, c.sink, 0, 60*time.Second); ev.Processed != 0 || ev.Invalid != 0 {
		t.Errorf("after a clean stop the same group redid %d messages (%d invalid), want 0", ev.Processed, ev.Invalid)
	}
	sameTotals(t, "totals", totalsOf(t, st), truth(t, b1))
}

// A commit ahead of every effect (what an offset reset after a broker
// restart leaves behind) must not make guarded mode skip messages: it
// starts at its furthest checkpoint instead, and each message gets its
// usage record once.
func TestKafkaGuardedCommitAheadStartsAtCheckpoint(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	uri, st := freshDB(t)
	data := newSensorData(3)
	b1 := data.next(t, 5, 6)
	produce(t, brokers, topic, b1)
	group := "usage-test-" + randHex(4)
	cfg := Config{Conn: cli.Conn{Brokers: brokers, Mongo: uri, Topic: topic}, HTTP: "127.0.0.1:0",
		Mode: lesson.Guarded, Reset: "earliest", Group: group, GroupExplicit: true, CrashAfter: 1}

	c1 := startConsumer(t, cfg)
	caughtUp(t, c1.sink, int64(len(b1.recs)), 60*time.Second)
	c1.stop(t)

	// Messages the group's commit will jump over.
	b2 := data.next(t, 5, 4)
	produce(t, brokers, topic, b2)
	ends := highWatermarks(t, brokers, topic)
	commitWhenEmpty(t, brokers, group, topic, ends, 60*time.Second)

	c2 := startConsumer(t, cfg)
	ev := caughtUp(t, c2.sink, int64(len(b2.recs)), 60*time.Second)
	if ev.Processed < int64(b2.valid) {
		t.Errorf("processed %d after the commit ahead, want at least the %d skipped ones", ev.Processed, b2.valid)
	}
	sameTotals(t, "after a commit ahead", totalsOf(t, st), truth(t, b1, b2))
	c2.stop(t)
}

func highWatermarks(t *testing.T, brokers, topic string) map[int32]int64 {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfg.Current(brokers, "usage-test-hw-"+randHex(4)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := map[int32]int64{}
	for p := int32(0); p < 3; p++ {
		_, high, err := c.QueryWatermarkOffsets(topic, p, 10000)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = high
	}
	return out
}

// commitWhenEmpty commits offsets for group as a non-member, which the
// broker accepts once the group has no member (the static member of the
// stopped consumer stays until its session times out).
func commitWhenEmpty(t *testing.T, brokers, group, topic string, offsets map[int32]int64, within time.Duration) {
	t.Helper()
	c, err := kafka.NewConsumer(kafkacfg.Current(brokers, group))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tps []kafka.TopicPartition
	for p, o := range offsets {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.Offset(o)})
	}
	deadline := time.Now().Add(within)
	for {
		res, err := c.CommitOffsets(tps)
		if err == nil {
			for _, tp := range res {
				if tp.Error != nil {
					err = tp.Error
				}
			}
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("commit offsets %v for %s: %v", offsets, group, err)
		}
		time.Sleep(500 * time.Millisecond) // the broker's session expiry, not observable otherwise
	}
}

// TestKafkaGuardedNoCommitLatestStartsAtCheckpoint: checkpoints but no
// commit in the group (a crash before its first commit), reset latest:
// guarded mode starts at the furthest checkpoint, so the messages since are
// applied, not jumped over.
func TestKafkaGuardedNoCommitLatestStartsAtCheckpoint(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	uri, st := freshDB(t)
	data := newSensorData(3)
	b1 := data.next(t, 5, 6)
	produce(t, brokers, topic, b1)
	cfg := Config{Conn: cli.Conn{Brokers: brokers, Mongo: uri, Topic: topic}, HTTP: "127.0.0.1:0",
		Mode: lesson.Guarded, Reset: "earliest", Group: "usage-test-" + randHex(4), GroupExplicit: true, CrashAfter: 1}
	c1 := startConsumer(t, cfg)
	caughtUp(t, c1.sink, int64(len(b1.recs)), 60*time.Second)
	c1.stop(t)

	b2 := data.next(t, 5, 4)
	produce(t, brokers, topic, b2)
	// A group that never committed, reading from latest.
	cfg.Group, cfg.Reset = "usage-test-"+randHex(4), "latest"
	c2 := startConsumer(t, cfg)
	ev := caughtUp(t, c2.sink, int64(len(b2.recs)), 60*time.Second)
	if ev.Processed < int64(b2.valid) {
		t.Errorf("processed %d, want at least the %d published since the checkpoints", ev.Processed, b2.valid)
	}
	sameTotals(t, "latest without a commit", totalsOf(t, st), truth(t, b1, b2))
	c2.stop(t)
}

// A guarded consumer with reset latest and no commit pins its start: a
// stop before its first commit must not make the next start skip what
// was published meanwhile (poison records among it would never reach the
// dead-letter topic).
func TestKafkaGuardedPinsItsLatestStart(t *testing.T) {
	brokers := brokerAddr(t)
	topic := createTopic(t, brokers)
	uri, st := freshDB(t)
	data := newSensorData(3)
	produce(t, brokers, topic, data.next(t, 3, 2)) // history before the group's first start
	cfg := Config{Conn: cli.Conn{Brokers: brokers, Mongo: uri, Topic: topic}, HTTP: "127.0.0.1:0",
		Mode: lesson.Guarded, Reset: "latest", Group: "usage-test-" + randHex(4), GroupExplicit: true}
	c1 := startConsumer(t, cfg)
	deadline := time.Now().Add(60 * time.Second)
	for !assigned(c1.sink.events()) {
		if time.Now().After(deadline) {
			t.Fatalf("no assignment within 60s: %s", dump(c1.sink.events()))
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	c1.stop(t) // nothing processed, so nothing of its own to commit

	b2 := data.next(t, 3, 4)
	produce(t, brokers, topic, b2)
	c2 := startConsumer(t, cfg)
	ev := caughtUp(t, c2.sink, int64(len(b2.recs)), 60*time.Second)
	if ev.Processed != int64(b2.valid) {
		t.Errorf("processed %d, want the %d published since the group's first start", ev.Processed, b2.valid)
	}
	sameTotals(t, "latest, pinned", totalsOf(t, st), truth(t, b2))
	c2.stop(t)
}

func assigned(evs []status.Event) bool {
	for _, ev := range evs {
		if ev.Type == status.Assigned {
			return true
		}
	}
	return false
}
