package usage

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// A sensor whose records the audit has not read yet says "pending", with
// no drift, beside one that is exact.
func TestPendingIsShown(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	b := board.New([]string{board.Usage, board.Query}, board.Config{})
	b.Apply(board.Tick{Now: at})
	b.Apply(board.ProcStarted{Name: board.Usage, PID: 2, At: at})
	b.Apply(board.ProcStarted{Name: board.Query, PID: 3, At: at})
	b.Apply(board.TruthSnapshot{At: at, Sensors: []board.Truth{{SensorID: "sensor-01"}, {SensorID: "sensor-02"}}})
	b.Apply(board.UsageSnapshot{At: at, Sensors: []board.UsageTotals{
		{SensorID: "sensor-01", Hours: 1.25, Km: 3, Records: 2, Expect: board.ExpectPending},
		{SensorID: "sensor-02", Hours: 1, Km: 2, Records: 1, Expect: board.ExpectReady, ExpectedHours: 1, ExpectedKm: 2},
	}})
	view := New(theme.New(nil), b.Usage(), false).View(120, 10)
	var pending, exact string
	for _, line := range strings.Split(view, "\n") {
		switch {
		case strings.Contains(line, "sensor-01"):
			pending = line
		case strings.Contains(line, "sensor-02"):
			exact = line
		}
	}
	if !strings.Contains(pending, "pending") || strings.Contains(pending, "0.00") {
		t.Errorf("pending row %q", pending)
	}
	if !strings.Contains(exact, "exact") {
		t.Errorf("exact row %q", exact)
	}
	if !strings.Contains(view, "total") || !strings.Contains(view, "pending") {
		t.Errorf("view\n%s", view)
	}
}
