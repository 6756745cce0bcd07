package ui

import (
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// sceneScaled: sceneRunning scaled to 3 instances (+ twice); after the
// rebalance each owns one partition; consumer-usage-2 holds its writes 8s,
// one landed late and consumer-usage refused it as a second effect.
func sceneScaled() *scene {
	s := sceneRunning()
	const m1, m2, m3 = "rdkafka-0f1e2d3c-4b5a-6978-8a9b-aabbccdd0001", "rdkafka-5e6f7a8b-4b5a-6978-8a9b-aabbccdd0002", "rdkafka-9c0d1e2f-4b5a-6978-8a9b-aabbccdd0003"
	for i, n := range []string{"consumer-usage-2", "consumer-usage-3"} {
		s.apply(board.ProcAdded{Name: n, At: at(64.5)})
		s.apply(board.ProcStarted{Name: n, PID: 4120 + i, At: at(64.5)})
		s.status(n, 64.6, status.Event{Type: status.Started, Mode: "naive", Reset: "latest", GroupID: "demo-usage"})
	}
	s.status(board.Usage, 64.7, status.Event{Type: status.Revoked, Partitions: []int32{0, 1, 2}, Member: m1, Generation: 6, InFlight: 1})
	s.status(board.Usage, 65.1, status.Event{Type: status.Assigned, Partitions: []int32{0}, Member: m1, Generation: 7, Millis: 420})
	s.status("consumer-usage-2", 65.1, status.Event{Type: status.Assigned, Partitions: []int32{1}, Member: m2, Generation: 7, Millis: 430, First: true})
	s.status("consumer-usage-3", 65.1, status.Event{Type: status.Assigned, Partitions: []int32{2}, Member: m3, Generation: 7, Millis: 440, First: true})
	s.apply(board.EffectDelaySet{Name: "consumer-usage-2", At: at(65.2), Delay: 8 * time.Second})
	s.status("consumer-usage-2", 65.2, status.Event{Type: status.EffectDelay, Millis: 8000})
	s.status("consumer-usage-2", 65.3, status.Event{Type: status.EffectHeld, Partition: 1, Offset: 212, Count: 1, Millis: 8000})
	s.status(board.Usage, 65.4, status.Event{Type: status.LateWrite, Partition: 1, Offset: 211, Count: 1, Prevented: 1})
	s.status("consumer-usage-2", 65.5, status.Event{Type: status.EffectRefused, Partition: 1, Offset: 211, Count: 1})
	s.status(board.Usage, 65.6, status.Event{Type: status.Progress, Processed: 640, Late: 1})
	s.status("consumer-usage-2", 65.6, status.Event{Type: status.Progress, Processed: 20, Prevented: 1})
	s.apply(board.Offsets{At: at(65.7), HighWatermarks: hwm(640)})
	s.apply(board.Committed{At: at(65.7), Group: "demo-usage", Offsets: hwm(634)})
	return s.tick(66)
}

// TestScaleKeys: + and - ask for one instance more or less, within 1–3,
// and a row scaled away gives the selection back to consumer-usage.
func TestScaleKeys(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	for _, k := range []string{"+", "+", "+"} { // the third: already 3, refused on the spot
		m = press(t, m, k)
	}
	if got := ctl.Calls(); len(got) != 2 || got[0] != "scale 2" || got[1] != "scale 3" {
		t.Fatalf("calls %v", got)
	}
	mm := m.(Model)
	if !mm.board.Has("consumer-usage-3") {
		t.Fatal("no consumer-usage-3 row")
	}
	// down from consumer-usage reaches its instances, in order.
	m = press(t, m, "3")
	m = press(t, m, "down")
	m = press(t, m, "down")
	if s := m.(Model).Selected(); s != "consumer-usage-3" {
		t.Fatalf("selected %s", s)
	}
	m = press(t, m, "-")
	if mm := m.(Model); mm.board.Has("consumer-usage-3") || mm.Selected() != board.Usage {
		t.Fatalf("after -: rows %v, selected %s", mm.board.Names(), mm.Selected())
	}
	m = press(t, m, "-")
	press(t, m, "-") // already 1
	if got := ctl.Calls(); len(got) != 4 || got[3] != "scale 1" {
		t.Fatalf("calls %v", got)
	}
}
