package board

import (
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func TestEventsInTimeOrderWithoutDuplicates(t *testing.T) {
	b := newBoard(
		Tick{Now: at(10)},
		ProcStarted{Name: Usage, PID: 10, At: at(1)},
		// A status stream delivers an earlier fact after a later one.
		ev(Usage, 3, status.Event{Type: status.Assigned, Partitions: []int32{0}}),
		ev(Usage, 2, status.Event{Type: status.Connected, Endpoint: "kafka", Addr: "k:9092"}),
		// One arming reported twice (a retried request): one entry.
		ev(Usage, 4, status.Event{Type: status.CrashPointArmed, Point: "after-delta", After: 1}),
		ev(Usage, 4.1, status.Event{Type: status.CrashPointArmed, Point: "after-delta", After: 1}),
		// The same action reported twice within a second: one entry.
		Action{At: at(5), Text: "script: crash consumer-usage"},
		Action{At: at(5.2), Text: "script: crash consumer-usage"},
	)
	var texts []string
	prev := at(0)
	for _, e := range b.Events() {
		if e.At.Before(prev) {
			t.Errorf("%q at %s comes after %s", e.Text, e.At.Format("05.0"), prev.Format("05.0"))
		}
		prev = e.At
		texts = append(texts, e.Text)
	}
	want := []string{
		"started, pid 10",
		"connected to kafka k:9092",
		"rebalance: assigned partitions [0]",
		"crash point after-delta armed: SIGKILLs itself at the next message that reaches it",
		"script: crash consumer-usage",
	}
	if !slices.Equal(texts, want) {
		t.Fatalf("timeline\n%q\nwant\n%q", texts, want)
	}
	// A headless log reads them in arrival order, each once.
	var seqs []uint64
	for _, e := range b.EventsSince(0) {
		seqs = append(seqs, e.Seq)
	}
	if !slices.IsSorted(seqs) || len(seqs) != len(want) {
		t.Fatalf("EventsSince(0) seqs %v", seqs)
	}
	if got := b.EventsSince(seqs[1]); len(got) != len(want)-2 {
		t.Fatalf("EventsSince(%d) = %v", seqs[1], got)
	}
	// The same fact later is a new entry.
	b.Apply(Action{At: at(9), Text: "script: crash consumer-usage"})
	if n := len(b.Events()); n != len(want)+1 {
		t.Fatalf("%d entries after a later repeat", n)
	}
}

func TestRequestedCrashSaysItStaysDown(t *testing.T) {
	b := newBoard(
		ProcStarted{Name: Usage, PID: 10, At: at(1)},
		Request{At: at(2), Name: Usage, Op: OpCrash},
		ProcExited{Name: Usage, PID: 10, At: at(2.1), Signal: "SIGKILL"},
	)
	if want := "crashed on request: killed by SIGKILL (pid 10); it stays down until r restarts it"; lastEvent(b) != want {
		t.Fatalf("last event %q, want %q", lastEvent(b), want)
	}
}

func TestModeEventNamesTheProcessOnce(t *testing.T) {
	b := newBoard(Mode{UsageMode: "guarded"})
	e := b.Events()[len(b.Events())-1]
	if e.Proc != Usage || e.Text != "from its next start: mode guarded, reset latest" {
		t.Fatalf("event %+v", e)
	}
}
