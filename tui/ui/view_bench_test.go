package ui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// BenchmarkView times one View() of the running dashboard at the designed
// 120x36, in colour as a terminal draws it, with 10 sensors (the product)
// and 1,000 (bounds: ≤ 1 ms and ≤ 5 ms; figures in docs/performance.md).
//
//	go test ./tui/ui -run '^$' -bench View -benchmem
func BenchmarkView(b *testing.B) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("sensors=%d", n), func(b *testing.B) {
			s := sceneRunningWith(n)
			m := tea.Model(New(s.b, &fakeController{}, Options{}))
			m, _ = m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
			if v := m.View(); len(v) == 0 {
				b.Fatal("empty view")
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = m.View()
			}
		})
	}
}

// sceneRunningWith is sceneRunning with n sensors in every snapshot.
func sceneRunningWith(n int) *scene {
	s := sceneRunning()
	const msgs = 63
	sensors := make([]board.SensorState, n)
	usage := make([]board.UsageTotals, n)
	truth := make([]board.Truth, n)
	ten := usageAt(msgs, nil)
	for i := range sensors {
		sensors[i] = sensorAt(i, msgs, 64.5)
		sensors[i].SensorID = fmt.Sprintf("sensor-%04d", i+1)
		usage[i] = ten[i%nSensors]
		usage[i].SensorID = sensors[i].SensorID
		last := sensors[i]
		truth[i] = board.Truth{SensorID: last.SensorID, Last: &last}
	}
	s.apply(board.SensorsSnapshot{At: at(64.5), CaughtUp: true, Sensors: sensors})
	s.apply(board.UsageSnapshot{At: at(64.5), Sensors: usage})
	s.apply(board.TruthSnapshot{At: at(64.5), AuditOffset: int64(msgs * nSensors), Sensors: truth})
	return s.tick(65)
}
