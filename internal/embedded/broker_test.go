package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

const (
	testTopic = "sensor-data"
	testParts = 3
)

func brokerRole(dir, listen string) roleFunc {
	return func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
		return RunBroker(ctx, BrokerConfig{DataDir: dir, Listen: listen, Topic: testTopic, Partitions: testParts}, em, log)
	}
}

func startBroker(t *testing.T, dir string) *running {
	t.Helper()
	r := startRole(t, "broker", "kafka", brokerRole(dir, "127.0.0.1:0"))
	checkLoopbackAddr(t, r.addr)
	return r
}

// tp identifies one stored record.
type tp struct {
	p int32
	o int64
}

// produce writes n messages with acks=all and idempotence and returns where
// each value landed.
func produce(t *testing.T, addr string, prefix string, n int) map[tp]string {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":  addr,
		"acks":               "all",
		"enable.idempotence": true,
		"linger.ms":          0,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	topic := testTopic
	dr := make(chan kafka.Event, n)
	for i := range n {
		v := fmt.Sprintf("%s-%d", prefix, i)
		err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            []byte(fmt.Sprintf("sensor-%d", i)),
			Value:          []byte(v),
		}, dr)
		if err != nil {
			t.Fatal(err)
		}
	}
	got := map[tp]string{}
	deadline := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case e := <-dr:
			m := e.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
			got[tp{m.TopicPartition.Partition, int64(m.TopicPartition.Offset)}] = string(m.Value)
		case <-deadline:
			t.Fatalf("only %d of %d delivery reports", len(got), n)
		}
	}
	return got
}

func newConsumer(t *testing.T, addr, group string, extra ...kafka.ConfigMap) *kafka.Consumer {
	t.Helper()
	cm := kafka.ConfigMap{
		"bootstrap.servers":  addr,
		"group.id":           group,
		"auto.offset.reset":  "earliest",
		"enable.auto.commit": false,
		// Explicitly librdkafka's default: the broker must accept it.
		"session.timeout.ms":                 45000,
		"fetch.queue.backoff.ms":             10,
		"enable.partition.eof":               false,
		"go.logs.channel.enable":             false,
		"topic.metadata.refresh.interval.ms": 1000,
	}
	for _, e := range extra {
		for k, v := range e {
			cm[k] = v
		}
	}
	c, err := kafka.NewConsumer(&cm)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// consume reads until n messages arrived.
func consume(t *testing.T, c *kafka.Consumer, n int) map[tp]string {
	t.Helper()
	got := map[tp]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d", len(got), n)
		}
		m, err := c.ReadMessage(500 * time.Millisecond)
		if err != nil {
			var ke kafka.Error
			if errors.As(err, &ke) && ke.Code() == kafka.ErrTimedOut {
				continue
			}
			t.Fatalf("read: %v", err)
		}
		got[tp{m.TopicPartition.Partition, int64(m.TopicPartition.Offset)}] = string(m.Value)
	}
	return got
}

func partitions() []kafka.TopicPartition {
	topic := testTopic
	var tps []kafka.TopicPartition
	for p := range int32(testParts) {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p})
	}
	return tps
}

// highWatermarks asks the broker for each partition's log-end offset.
func highWatermarks(t *testing.T, c *kafka.Consumer) []int64 {
	t.Helper()
	var hw []int64
	for _, p := range partitions() {
		lo, hi, err := c.QueryWatermarkOffsets(testTopic, p.Partition, 10000)
		if err != nil {
			t.Fatalf("watermarks p%d: %v", p.Partition, err)
		}
		if lo != 0 {
			t.Errorf("p%d low watermark %d, want 0", p.Partition, lo)
		}
		hw = append(hw, hi)
	}
	return hw
}

// committed returns the group's committed offset per partition as the broker
// reports it to c (whose group.id is the group).
func committed(t *testing.T, c *kafka.Consumer) []int64 {
	t.Helper()
	tps, err := c.Committed(partitions(), 10000)
	if err != nil {
		t.Fatalf("committed: %v", err)
	}
	var out []int64
	for _, p := range tps {
		if p.Error != nil {
			t.Fatalf("committed p%d: %v", p.Partition, p.Error)
		}
		out = append(out, int64(p.Offset))
	}
	return out
}

func sum(xs []int64) (s int64) {
	for _, x := range xs {
		s += x
	}
	return s
}

// TestBrokerPersistsAcrossRestart: messages, high watermarks and a group's
// committed offsets survive a clean stop and start on the same data dir, and
// the group resumes from its commit.
func TestBrokerPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	const n = 30
	const group = "krl-test-usage"

	b1 := startBroker(t, dir)
	sent := produce(t, b1.addr, "before", n)

	c := newConsumer(t, b1.addr, group)
	if err := c.Subscribe(testTopic, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := consume(t, c, n)
	t.Logf("join + consume %d: %v", n, time.Since(start).Round(time.Millisecond))
	if len(got) != n {
		t.Fatalf("consumed %d distinct records, want %d", len(got), n)
	}
	for k, v := range sent {
		if got[k] != v {
			t.Fatalf("record %v = %q, want %q", k, got[k], v)
		}
	}
	if _, err := c.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	hw1 := highWatermarks(t, c)
	com1 := committed(t, c)
	if sum(hw1) != n || fmt.Sprint(hw1) != fmt.Sprint(com1) {
		t.Fatalf("before restart: high watermarks %v, committed %v; want sum %d and equal", hw1, com1, n)
	}

	// A group that never committed: Apache Kafka answers "no offset" per
	// partition; kfake answers GROUP_ID_NOT_FOUND for the whole group.
	// Callers must read both as "no commits".
	fresh := newConsumer(t, b1.addr, "krl-test-never-committed")
	tps, err := fresh.Committed(partitions(), 10000)
	var ke kafka.Error
	switch {
	case errors.As(err, &ke) && ke.Code() == kafka.ErrGroupIDNotFound:
		t.Logf("never-committed group: %v (kfake's answer)", err)
	case err != nil:
		t.Fatalf("never-committed group: %v", err)
	default:
		for _, p := range tps {
			if p.Error != nil || p.Offset != kafka.OffsetInvalid {
				t.Errorf("never-committed group p%d: %v %v, want no offset", p.Partition, p.Offset, p.Error)
			}
		}
		t.Logf("never-committed group: no offset per partition (Apache Kafka's answer)")
	}
	fresh.Close()
	if err := c.Close(); err != nil {
		t.Fatalf("close consumer: %v", err)
	}
	t.Logf("clean stop took %v", b1.stop().Round(time.Millisecond))

	b2 := startBroker(t, dir)
	t.Logf("restarted on %s (was %s)", b2.addr, b1.addr)

	probe := newConsumer(t, b2.addr, group)
	hw2 := highWatermarks(t, probe)
	com2 := committed(t, probe)
	probe.Close()
	if fmt.Sprint(hw2) != fmt.Sprint(hw1) {
		t.Fatalf("high watermarks after restart %v, want %v", hw2, hw1)
	}
	if fmt.Sprint(com2) != fmt.Sprint(com1) {
		t.Fatalf("committed offsets after restart %v, want %v", com2, com1)
	}

	// Every stored record is still there, at the same place.
	replay := newConsumer(t, b2.addr, "krl-test-replay")
	if err := replay.Assign(withOffset(partitions(), kafka.OffsetBeginning)); err != nil {
		t.Fatal(err)
	}
	again := consume(t, replay, n)
	replay.Close()
	for k, v := range sent {
		if again[k] != v {
			t.Fatalf("after restart record %v = %q, want %q", k, again[k], v)
		}
	}

	// The group resumes exactly after its commit: the next record it reads is
	// the one produced after the restart.
	after := produce(t, b2.addr, "after", 1)
	// The lower end of the session timeouts the lab uses must be accepted too.
	resume := newConsumer(t, b2.addr, group, kafka.ConfigMap{"session.timeout.ms": 6000})
	if err := resume.Subscribe(testTopic, nil); err != nil {
		t.Fatal(err)
	}
	first := consume(t, resume, 1)
	resume.Close()
	if fmt.Sprint(first) != fmt.Sprint(after) {
		t.Fatalf("group resumed with %v, want %v", first, after)
	}
}

func withOffset(tps []kafka.TopicPartition, o kafka.Offset) []kafka.TopicPartition {
	for i := range tps {
		tps[i].Offset = o
	}
	return tps
}

// TestBrokerNoAutoTopicCreation: asking for metadata of another topic, with
// the producer's allow-auto-create, does not create it.
func TestBrokerNoAutoTopicCreation(t *testing.T) {
	b := startBroker(t, t.TempDir())
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": b.addr, "allow.auto.create.topics": true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other := "sensor-dta" // a typo must not become a topic
	md, err := p.GetMetadata(&other, false, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if tm, ok := md.Topics[other]; !ok || tm.Error.Code() != kafka.ErrUnknownTopicOrPart {
		t.Fatalf("metadata for %s: %+v, want unknown topic", other, md.Topics[other])
	}
	all, err := p.GetMetadata(nil, true, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, tm := range all.Topics {
		names = append(names, name)
		if name == testTopic && len(tm.Partitions) != testParts {
			t.Errorf("%s has %d partitions, want %d", name, len(tm.Partitions), testParts)
		}
	}
	sort.Strings(names)
	changelog, dlq := kafkacfg.ChangelogTopic(testTopic), kafkacfg.DeadLetterTopic(testTopic)
	if len(names) != 3 || names[0] != testTopic || names[1] != changelog || names[2] != dlq {
		t.Fatalf("topics %v, want only %s, consumer-current's changelog %s and the dead-letter topic %s", names, testTopic, changelog, dlq)
	}
}

// TestBrokerPortInUse: a second broker on the first one's port fails fast
// with an error and never reports listening.
func TestBrokerPortInUse(t *testing.T) {
	b := startBroker(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newSink()
	err := RunBroker(ctx, BrokerConfig{DataDir: t.TempDir(), Listen: b.addr, Topic: testTopic, Partitions: testParts},
		status.NewTo("broker", s), testLogger(t))
	if err == nil || ctx.Err() != nil {
		t.Fatalf("second broker on %s: err=%v ctx=%v, want an immediate error", b.addr, err, ctx.Err())
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error %q does not say the address is in use", err)
	}
	if evs := s.events(); len(evs) != 0 {
		t.Errorf("failed broker emitted %v", evs)
	}
}

// TestBrokerFixedPort: a fixed port is used as asked.
func TestBrokerFixedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	want := ln.Addr().String()
	ln.Close() // free it for the broker; another process taking it meanwhile is unlikely
	b := startRole(t, "broker", "kafka", brokerRole(t.TempDir(), want))
	if b.addr != want {
		t.Fatalf("listening on %s, want %s", b.addr, want)
	}
	if got := topicPartitions(t, b.addr); got[testTopic] != testParts {
		t.Fatalf("topics %v", got)
	}
}

// TestBrokerBadConfig: bad data dirs and settings are errors, not panics.
func TestBrokerBadConfig(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(tmp, "corrupt")
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, "meta.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]BrokerConfig{
		"data dir is a file": {DataDir: file, Listen: "127.0.0.1:0", Topic: testTopic, Partitions: 3},
		"corrupt meta.json":  {DataDir: corrupt, Listen: "127.0.0.1:0", Topic: testTopic, Partitions: 3},
		"no data dir":        {Listen: "127.0.0.1:0", Topic: testTopic, Partitions: 3},
		"no topic":           {DataDir: t.TempDir(), Listen: "127.0.0.1:0", Partitions: 3},
		"zero partitions":    {DataDir: t.TempDir(), Listen: "127.0.0.1:0", Topic: testTopic},
		"bad listen":         {DataDir: t.TempDir(), Listen: "127.0.0.1", Topic: testTopic, Partitions: 3},
		"wildcard listen":    {DataDir: t.TempDir(), Listen: "0.0.0.0:0", Topic: testTopic, Partitions: 3},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := RunBroker(ctx, cfg, nil, testLogger(t))
			if err == nil || ctx.Err() != nil {
				t.Fatalf("err=%v ctx=%v, want an immediate error", err, ctx.Err())
			}
			t.Logf("error: %v", err)
		})
	}
}

// TestBrokerRestartAfterSIGKILL runs the broker in a child process, writes and
// commits, SIGKILLs it, and restarts it here on the same data dir. While the
// child lives, its data dir lock refuses a second broker.
func TestBrokerRestartAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	const n = 40
	const group = "krl-test-killed"

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBrokerProcess$")
	cmd.Env = append(os.Environ(), "KRL_EMBEDDED_HELPER_DIR="+dir)
	cmd.Stderr = tlogWriter{t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if ev, err := status.Parse(sc.Bytes()); err == nil && ev.Type == status.Listening {
				addrCh <- ev.Addr
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case <-time.After(20 * time.Second):
		t.Fatal("child broker: no listening event")
	}
	checkLoopbackAddr(t, addr)

	// The data dir is locked by the child.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = RunBroker(ctx, BrokerConfig{DataDir: dir, Listen: "127.0.0.1:0", Topic: testTopic, Partitions: testParts}, nil, testLogger(t))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("in use by process %d", cmd.Process.Pid)) {
		t.Fatalf("second broker on a live data dir: %v, want in-use error naming pid %d", err, cmd.Process.Pid)
	}

	sent := produce(t, addr, "killed", n)
	// Read by assignment and commit positions: no group join needed.
	c := newConsumer(t, addr, group)
	if err := c.Assign(withOffset(partitions(), kafka.OffsetBeginning)); err != nil {
		t.Fatal(err)
	}
	consume(t, c, n)
	if _, err := c.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	hw1 := highWatermarks(t, c)
	com1 := committed(t, c)
	c.Close()
	if sum(hw1) != n || fmt.Sprint(hw1) != fmt.Sprint(com1) {
		t.Fatalf("before kill: high watermarks %v, committed %v", hw1, com1)
	}

	killed = true
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	b := startBroker(t, dir)
	probe := newConsumer(t, b.addr, group)
	defer probe.Close()
	if hw2 := highWatermarks(t, probe); fmt.Sprint(hw2) != fmt.Sprint(hw1) {
		t.Fatalf("high watermarks after SIGKILL %v, want %v", hw2, hw1)
	}
	if com2 := committed(t, probe); fmt.Sprint(com2) != fmt.Sprint(com1) {
		t.Fatalf("committed offsets after SIGKILL %v, want %v", com2, com1)
	}
	if err := probe.Assign(withOffset(partitions(), kafka.OffsetBeginning)); err != nil {
		t.Fatal(err)
	}
	again := consume(t, probe, n)
	for k, v := range sent {
		if again[k] != v {
			t.Fatalf("after SIGKILL record %v = %q, want %q", k, again[k], v)
		}
	}
}

// TestHelperBrokerProcess is the child of TestBrokerRestartAfterSIGKILL.
func TestHelperBrokerProcess(t *testing.T) {
	dir := os.Getenv("KRL_EMBEDDED_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := RunBroker(ctx, BrokerConfig{DataDir: dir, Listen: "127.0.0.1:0", Topic: testTopic, Partitions: testParts},
		status.New("broker"), log)
	if err != nil {
		t.Fatal(err)
	}
}

// TestKfakeIgnoresSeedTopicsOnReload pins the kfake behaviour RunBroker works
// around: seed topics are applied only to a fresh data dir.
func TestKfakeIgnoresSeedTopicsOnReload(t *testing.T) {
	dir := t.TempDir()
	c1, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SeedTopics(3, "a"))
	if err != nil {
		t.Fatal(err)
	}
	c1.Close()
	c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SeedTopics(2, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if n := len(c2.PartitionInfos("a")); n != 3 {
		t.Errorf("reloaded topic a has %d partitions, want the persisted 3", n)
	}
	if c2.TopicInfo("b") != nil {
		t.Errorf("kfake now creates seed topics on reload: ensureTopic could be simplified")
	}
}

func topicPartitions(t *testing.T, addr string) map[string]int {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": addr})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	md, err := p.GetMetadata(nil, true, 10000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for name, tm := range md.Topics {
		out[name] = len(tm.Partitions)
	}
	return out
}

// TestBrokerTopicOnReload: a reloaded data dir keeps an existing topic's
// partition count even when asked for another, and gets a missing topic.
func TestBrokerTopicOnReload(t *testing.T) {
	dir := t.TempDir()
	role := func(topic string, parts int32) roleFunc {
		return func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
			return RunBroker(ctx, BrokerConfig{DataDir: dir, Listen: "127.0.0.1:0", Topic: topic, Partitions: parts}, em, log)
		}
	}
	b := startRole(t, "broker", "kafka", role("t1", 3))
	b.stop()
	b = startRole(t, "broker", "kafka", role("t1", 5))
	if got := topicPartitions(t, b.addr); fmt.Sprint(got) != "map[t1:3 t1.current-state:1 t1.dlq:1]" {
		t.Fatalf("after asking for 5 partitions: %v, want t1 kept at 3", got)
	}
	b.stop()
	b = startRole(t, "broker", "kafka", role("t2", 2))
	if got := topicPartitions(t, b.addr); fmt.Sprint(got) != "map[t1:3 t1.current-state:1 t1.dlq:1 t2:2 t2.current-state:1 t2.dlq:1]" {
		t.Fatalf("after asking for t2: %v, want t1:3 and t2:2 and their changelog and dead-letter topics", got)
	}
}
