package usage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// TestShortPanelKeepsTheDrift: with room for 5 of 10 sensors, the one that
// over-counted (sensor-09) stays on screen and the cut line says the rest
// are exact; with more drifting sensors than rows, it says how many hide.
func TestShortPanelKeepsTheDrift(t *testing.T) {
	rows := make([]board.UsageRow, 10)
	for i := range rows {
		rows[i] = board.UsageRow{SensorID: fmt.Sprintf("sensor-%02d", i+1), Verdict: board.VerdictExact}
	}
	rows[8].Verdict = board.VerdictOver
	v := board.UsageView{Truth: board.Live, Rows: rows, Total: board.UsageRow{SensorID: "total", Verdict: board.VerdictOver}}
	out := Panel{Styles: theme.New(nil), State: v}.View(Width(), 9)
	plain := ansi.Strip(out)
	if !strings.Contains(plain, "sensor-09") || !strings.Contains(plain, "… 5 more sensors, exact") {
		t.Fatalf("the drifting sensor is hidden, or the cut line does not say the rest are exact:\n%s", plain)
	}
	for i := range rows {
		rows[i].Verdict = board.VerdictLost
	}
	out = Panel{Styles: theme.New(nil), State: v}.View(Width(), 9)
	if plain := ansi.Strip(out); !strings.Contains(plain, "… 5 more sensors, 5 of them drifting") {
		t.Fatalf("hidden drifts not said:\n%s", plain)
	}
}
