package producer

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// TestSentCountsInjectedRecords: the producer's sent count is what the
// topic grew by, malformed records injected on purpose included, paused or
// not.
func TestSentCountsInjectedRecords(t *testing.T) {
	brokers := startBroker(t)
	control := make(chan Control)
	inject := make(chan InjectRequest)
	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: 10 * time.Millisecond, Seed: 5,
			Control: control, Inject: inject}, status.NewTo(Role, sink), testLog(t))
	}()
	defer func() {
		cancel()
		<-done
	}()
	sink.await(t, "progress", func(e status.Event) bool { return e.Type == status.Progress && e.Produced > 0 }, 20*time.Second)
	control <- Pause
	paused := sink.await(t, "paused", func(e status.Event) bool { return e.Type == status.Paused }, 10*time.Second)

	const bad = 9
	reply := make(chan InjectResult, 1)
	inject <- InjectRequest{N: bad, Reply: reply}
	select {
	case res := <-reply:
		if res.Delivered != bad {
			t.Fatalf("injected %d of %d: %s", res.Delivered, bad, res.Error)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no reply to the injection")
	}
	ev := sink.await(t, "bad injected", func(e status.Event) bool { return e.Type == status.BadInjected }, 10*time.Second)
	topic := int64(len(readAll(t, brokers)))
	if ev.Produced != topic {
		t.Fatalf("after %d injected records the producer says %d sent (%d before them), the topic holds %d",
			bad, ev.Produced, paused.Produced, topic)
	}
	if ev.Produced < paused.Produced+bad {
		t.Fatalf("sent %d after the injection, %d before it: the %d injected records are not counted", ev.Produced, paused.Produced, bad)
	}
}

// TestHistoryBurstSaysHowFarItMovedTheFleet: a burst on a topic that has
// live messages follows each sensor's latest reading; its result says how
// many engine hours that moved a counter and in how little stamped time.
func TestHistoryBurstSaysHowFarItMovedTheFleet(t *testing.T) {
	brokers := startBroker(t)
	history := make(chan HistoryRequest)
	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: 20 * time.Millisecond, Seed: 9, History: history},
			status.NewTo(Role, sink), testLog(t))
	}()
	defer func() {
		cancel()
		<-done
	}()
	sink.await(t, "progress", func(e status.Event) bool { return e.Type == status.Progress && e.Produced >= 6 }, 20*time.Second)
	const rounds = 200
	req := HistoryRequest{N: 3 * rounds, Reply: make(chan HistoryResult, 1)}
	history <- req
	res := <-req.Reply
	if res.Error != "" || res.Delivered != 3*rounds {
		t.Fatalf("history: %+v", res)
	}
	// Each message is a step of at most 0.20 h; a working machine takes
	// some of them, so 200 rounds move some counter by more than a few hours.
	if res.AdvancedHours <= 1 || res.AdvancedHours > rounds*0.20 {
		t.Fatalf("advanced %.2f h in %d rounds", res.AdvancedHours, rounds)
	}
	if res.StampedMillis <= 0 || res.StampedMillis > 60_000 {
		t.Fatalf("the burst's stamps span %d ms", res.StampedMillis)
	}
	t.Logf("a burst of %d rounds moved a counter by %.2f h in %d ms of timestamps", rounds, res.AdvancedHours, res.StampedMillis)
}
