package ui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

func TestForwardGathersABurstAndKeepsOrder(t *testing.T) {
	in := make(chan board.Input, 16)
	sent := make(chan tea.Msg, 16)
	done := make(chan struct{})
	for i := 0; i < 3; i++ { // queued before Forward starts: one burst
		in <- board.Tick{Now: at(float64(i))}
	}
	go func() { Forward(in, func(m tea.Msg) { sent <- m }, 200*time.Millisecond); close(done) }()
	first := (<-sent).(Inputs)
	if len(first) != 3 {
		t.Fatalf("a burst of 3 inputs within one window came as %d", len(first))
	}
	for i, in := range first {
		if got := in.(board.Tick).Now; !got.Equal(at(float64(i))) {
			t.Fatalf("input %d is the tick of %v: order lost", i, got)
		}
	}
	in <- board.Tick{Now: at(9)}
	close(in)
	if last := (<-sent).(Inputs); len(last) != 1 {
		t.Fatalf("the input before the close came as %d", len(last))
	}
	<-done
}

func TestInputsAppliedAsOne(t *testing.T) {
	s := sceneRunning()
	m := tea.Model(New(s.b, &fakeController{}, Options{}))
	m.Update(Inputs{board.Tick{Now: at(70)}, board.ProcExited{Name: board.Usage, PID: 4111, At: at(70), Signal: "SIGKILL", ExitCode: -1}})
	if p := s.b.Process(board.Usage); p.Alive {
		t.Fatalf("consumer-usage still alive after the batch: %+v", p)
	}
	if !s.b.Now().Equal(at(70)) {
		t.Fatalf("board clock %v, want the batch's tick", s.b.Now())
	}
}

// TestForwardDrawsUrgentInputsAtOnce: routine inputs wait out Settle, so
// the idle screen is drawn a few times a second; an exit cuts the wait to
// a frame, so a crash is on screen at once.
func TestForwardDrawsUrgentInputsAtOnce(t *testing.T) {
	in := make(chan board.Input, 4)
	sent := make(chan tea.Msg, 4)
	go Forward(in, func(m tea.Msg) { sent <- m }, 10*time.Millisecond)
	defer close(in)

	began := time.Now()
	in <- board.Tick{Now: at(1)}
	<-sent
	if waited := time.Since(began); waited < Settle {
		t.Errorf("a tick alone was handed over after %v, before Settle (%v)", waited, Settle)
	}

	began = time.Now()
	in <- board.Tick{Now: at(2)}
	in <- board.ProcExited{Name: board.Usage, PID: 4111, At: at(2), Signal: "SIGKILL", ExitCode: -1}
	run := (<-sent).(Inputs)
	if waited := time.Since(began); waited >= Settle/2 {
		t.Errorf("an exit was handed over after %v, want about a frame", waited)
	}
	if len(run) != 2 {
		t.Errorf("the tick and the exit came as %d inputs, want one run of 2", len(run))
	}
}
