package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// w shows the total drift's causes in words in the sensors' and usage's
// place, w again each drifting sensor with its messages, then closes;
// esc closes it too.
func TestWhyViewKey(t *testing.T) {
	s := sceneRunning()
	us := usageAt(64, func(i int) (float64, float64) {
		if i == 0 {
			return 8.57, 11.71
		}
		return 0, 0
	})
	us[0].Causes = []board.Cause{{Kind: board.CauseStaleReading, Partition: 2, Offset: 110, Records: 1,
		Writer: "consumer-usage@2026-01-02T10:00:00Z", BaseTimestamp: 1_767_348_060_000,
		RecordedHoursCents: 863, RecordedKmCents: 1177, ExpectedHoursCents: 6, ExpectedKmCents: 6}}
	s.apply(board.UsageSnapshot{At: at(64.2), Sensors: us})
	m, _ := tea.Model(New(s.b, &fakeController{}, Options{})).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	before := m.View()
	m = press(t, m, "w")
	v := m.View()
	checkFrame(t, v, 120, 36)
	for _, want := range []string{"Why: the drift of the total · w next sensor, esc closes",
		"the total: +8.57 h +11.71 km over-counted, made by 1 message in 1 group:",
		"+8.57 h +11.71 km: 1 message of p2 (offset 110) recorded by consumer-usage (started "} {
		if !strings.Contains(v, want) {
			t.Fatalf("w view lacks %q:\n%s", want, v)
		}
	}
	m = press(t, m, "w")
	if v := m.View(); !strings.Contains(v, "Why: the drift of sensor-01") ||
		!strings.Contains(v, "p2@110 stale-reading: recorded 8.63 h 11.77 km · topic 0.06 h 0.06 km · +8.57 h") {
		t.Fatalf("w again: not sensor-01's messages:\n%s", v)
	}
	if m = press(t, m, "w"); m.View() != before {
		t.Fatalf("w past the last drifting sensor did not close the view:\n%s", m.View())
	}
	if m = press(t, press(t, m, "w"), "esc"); m.View() != before {
		t.Fatalf("esc did not close the w view:\n%s", m.View())
	}
}
