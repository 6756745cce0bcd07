package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// With the user's consumer-usage the footer leaves out the keys the lab
// refuses for it (m, e, c), and its row and line say what runs.
func TestYourConsumerOnScreen(t *testing.T) {
	s := &scene{b: board.New([]string{board.Producer, board.Current, board.Usage, board.Query, board.Broker, board.Store},
		board.Config{RunDir: "/tmp/krl/run", UsageCmd: "python3 my_consumer.py"})}
	s.tick(0)
	s.apply(board.ProcStarted{Name: board.Usage, PID: 4111, At: at(0.5)})
	s.tick(1)
	view := newModel(s, &fakeController{}).View()
	lines := strings.Split(view, "\n")
	footer := lines[len(lines)-1]
	for _, k := range []string{"m mode", "e reset", "c crash point"} {
		if strings.Contains(footer, k) {
			t.Errorf("the footer offers %q for the user's consumer: %q", k, footer)
		}
	}
	if !strings.Contains(footer, "x crash") {
		t.Errorf("the footer lost x: %q", footer)
	}
	for _, want := range []string{"consumer-usage: your command python3 my_consumer.py", "yours", "Usage · your consumer's records vs audit"} {
		if !strings.Contains(view, want) {
			t.Errorf("the screen lacks %q:\n%s", want, view)
		}
	}
}

// A run that continues an earlier one says so in the header at every
// size, not only in a timeline line that scrolls away.
func TestResumedRunSaysSo(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}, {200, 50}} {
		s := &scene{b: board.New([]string{board.Producer, board.Current, board.Usage, board.Query, board.Broker, board.Store},
			board.Config{RunDir: "/tmp/krl/run", Resumed: true})}
		s.tick(3)
		m, _ := New(s.b, &fakeController{}, Options{}).Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		if header := strings.Split(m.View(), "\n")[0]; !strings.Contains(header, "resumed") {
			t.Errorf("%dx%d: the header does not say the run is resumed: %q", size[0], size[1], header)
		}
	}
}
