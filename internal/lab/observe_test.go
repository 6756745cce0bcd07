package lab

import (
	"context"
	"slices"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
)

// TestNarrationRidesTheInputs: a scenario's progress reaches the front end
// on Inputs, in order with the board inputs around it, and leaves the
// lab's board as it was.
func TestNarrationRidesTheInputs(t *testing.T) {
	l, err := New(Config{RunDir: t.TempDir(), Brokers: "127.0.0.1:1", Mongo: "mongodb://127.0.0.1:2", Topic: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Shutdown(context.Background())
	l.Note("before")
	events := len(l.EventsSince(0))
	l.Narrate(scenario.Progress{Name: "replay", Step: 1})
	if n := len(l.EventsSince(0)); n != events {
		t.Fatalf("the narration changed the lab's board: %d events, then %d", events, n)
	}
	l.Note("after")
	var got []string
	for range 3 {
		switch in := (<-l.Inputs()).(type) {
		case board.Action:
			got = append(got, in.Text)
		case board.Narration[scenario.Progress]:
			got = append(got, in.Step.Name)
		default:
			t.Fatalf("unexpected input %T", in)
		}
	}
	if want := []string{"before", "replay", "after"}; !slices.Equal(got, want) {
		t.Fatalf("inputs %q, want %q", got, want)
	}
}
