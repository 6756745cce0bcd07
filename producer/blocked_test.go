package producer

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// TestBlockedOnNotEnoughReplicas: a broker refusing every write with
// NOT_ENOUGH_REPLICAS (kfake's fault injection, the answer of a cluster
// whose ISR fell below min.insync.replicas) makes the producer say it is
// blocked, with records buffered and none failed; once the broker takes
// writes again it says unblocked and every record lands.
func TestBlockedOnNotEnoughReplicas(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, testTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]

	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	go func() {
		done <- Run(ctx, Config{Brokers: addr, Topic: testTopic, Sensors: 3, Interval: 50 * time.Millisecond, Seed: 1},
			status.NewTo(Role, sink), log)
	}()
	sink.await(t, "first progress with deliveries", func(e status.Event) bool {
		return e.Type == status.Progress && e.Produced > 0
	}, 20*time.Second)

	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: testTopic, Err: kerr.NotEnoughReplicas, Count: -1})
	faulted := time.Now()
	blocked := sink.await(t, "blocked", func(e status.Event) bool { return e.Type == status.Blocked }, 20*time.Second)
	t.Logf("blocked %.1f s after the fault: %d buffered, none acked for %d ms", time.Since(faulted).Seconds(), blocked.Count, blocked.Millis)
	if blocked.Count <= 0 || blocked.Millis < BlockedAfter.Milliseconds() ||
		blocked.Error != "NOT_ENOUGH_REPLICAS (Broker: Not enough in-sync replicas)" {
		t.Errorf("blocked event: %+v", blocked)
	}
	if h.Hits() == 0 {
		t.Error("the fault never answered a produce request")
	}

	h.Remove()
	unblocked := sink.await(t, "unblocked", func(e status.Event) bool { return e.Type == status.Unblocked }, 30*time.Second)
	if unblocked.Error != "" || unblocked.Millis < BlockedAfter.Milliseconds() {
		t.Errorf("unblocked event: %+v", unblocked)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stopped := logs.String()
	if !strings.Contains(stopped, "producer stopped") || !strings.Contains(stopped, " failed=0 unflushed=0") ||
		strings.Contains(stopped, "delivery failed") {
		t.Errorf("records failed or were left over:\n%s", stopped)
	}
	var final status.Event
	for _, e := range sink.all {
		if e.Type == status.Progress {
			final = e
		}
	}
	// Every acknowledged record is in the topic.
	o, err := observe.NewOffsets(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	hw, err := o.HighWatermarks(context.Background(), testTopic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range hw {
		total += n
	}
	if final.Produced == 0 || total != final.Produced {
		t.Errorf("produced %d, topic holds %d", final.Produced, total)
	}
}

// TestStallWatch drives the blocked detection with synthetic counters and
// times.
func TestStallWatch(t *testing.T) {
	sink := &events{}
	pub := &publisher{em: status.NewTo(Role, sink), log: slog.New(slog.DiscardHandler)}
	w := &stallWatch{pub: pub}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	count := func(typ status.Type) int {
		n := 0
		for _, e := range sink.all {
			if e.Type == typ {
				n++
			}
		}
		return n
	}
	pub.enqueued.Store(10)
	pub.reported.Store(10)
	pub.delivered.Store(10)
	w.check(sec(0), false)
	pub.enqueued.Store(30) // 20 buffered from now on, no acks
	w.check(sec(1), false)
	w.check(sec(2), false) // 2 s since nothing was buffered: not yet more than BlockedAfter
	if count(status.Blocked) != 0 {
		t.Fatal("blocked at 2 s")
	}
	w.check(sec(3), true) // paused: never blocked
	if count(status.Blocked) != 0 {
		t.Fatal("blocked while paused")
	}
	w.check(sec(3), false)
	if count(status.Blocked) != 1 || sink.all[0].Count != 20 || sink.all[0].Millis != 3000 {
		t.Fatalf("blocked: %+v", sink.all)
	}
	w.check(sec(3.5), false) // repeated only every blockedRepeat
	w.check(sec(4), false)
	if count(status.Blocked) != 2 {
		t.Fatalf("repeats: %d", count(status.Blocked))
	}
	pub.delivered.Store(15)
	pub.reported.Store(15)
	w.check(sec(10), false)
	if count(status.Unblocked) != 1 || sink.all[2].Error != "" || sink.all[2].Millis != 10000 {
		t.Fatalf("unblocked: %+v", sink.all)
	}
	// Blocked again, and this time the records fail instead.
	pub.enqueued.Store(40)
	w.check(sec(13), false)
	pub.failed.Store(25)
	pub.reported.Store(40)
	w.check(sec(14), false)
	if count(status.Blocked) != 3 || count(status.Unblocked) != 2 || sink.all[4].Error == "" {
		t.Fatalf("failed records: %+v", sink.all)
	}
}
