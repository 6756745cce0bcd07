package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The t view takes the sensors' and usage's place, shares the lower area
// with nothing else (logs, picker), and esc or t gives them back.
func TestPartitionsViewKey(t *testing.T) {
	m, _ := tea.Model(New(sceneFailover().b, &fakeController{}, Options{})).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	before := m.View()
	m = press(t, m, "t")
	v := m.View()
	checkFrame(t, v, 120, 36)
	for _, want := range []string{"Partitions of sensor-data · t or esc closes", "p1 leader 3 → 1 at 10:01:00, 0.5 s after broker-3 exited",
		"acks=all refused on p0 p1 p2: ISR below min.insync.replicas 2", "10 sensors, each in its key's partition, in order: 610 records read, 0 out of order"} {
		if !strings.Contains(v, want) {
			t.Fatalf("t view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "Sensors ") || strings.Contains(v, "· partitions") {
		t.Fatalf("the sensors or the top box's partitions line are still there:\n%s", v)
	}
	m = press(t, m, "l")
	if got := m.(Model); got.overlay.is(partitionsPanel) || !got.overlay.is(logsPanel) {
		t.Fatalf("l after t: partitions %v logs %v", got.overlay.is(partitionsPanel), got.overlay.is(logsPanel))
	}
	m = press(t, m, "t")
	if got := m.(Model); !got.overlay.is(partitionsPanel) || got.overlay.is(logsPanel) {
		t.Fatalf("t after l: partitions %v logs %v", got.overlay.is(partitionsPanel), got.overlay.is(logsPanel))
	}
	if m = press(t, m, "esc"); m.View() != before {
		t.Fatalf("esc did not give the screen back:\n%s", m.View())
	}
	m = press(t, press(t, m, "t"), "t")
	if m.View() != before {
		t.Fatalf("t twice did not give the screen back:\n%s", m.View())
	}
}

// A watcher may open the t view: it changes only what that viewer sees.
func TestReadOnlyPartitionsView(t *testing.T) {
	ctl := &fakeController{}
	m := readOnlyModel(sceneRunning(), ctl, Options{}, 120, 36)
	m = press(t, m, "t")
	if v := m.View(); !m.(Model).overlay.is(partitionsPanel) || !strings.Contains(v, "one node leads every partition") {
		t.Fatalf("t did not open the partitions view read-only:\n%s", v)
	}
	if calls := ctl.Calls(); len(calls) != 0 {
		t.Fatalf("controller calls %q", calls)
	}
}
