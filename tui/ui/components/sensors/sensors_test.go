package sensors

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

// TestShortPanelKeepsTheWrongState: with room for 5 of 10 sensors, the one
// whose state the audit calls wrong stays on screen, and the cut line says
// the hidden ones are the same as the audit's.
func TestShortPanelKeepsTheWrongState(t *testing.T) {
	rows := make([]board.SensorRow, 10)
	for i := range rows {
		rows[i].SensorID, rows[i].Truth = fmt.Sprintf("sensor-%02d", i+1), board.TruthMatch
	}
	rows[8].Truth = board.TruthDiffers
	v := board.SensorsView{Status: board.Live, Rows: rows}
	plain := ansi.Strip(Panel{Styles: theme.New(nil), State: v}.View(MinWidth(), 8))
	if !strings.Contains(plain, "sensor-09") || !strings.Contains(plain, "WRONG") || !strings.Contains(plain, "… 5 more sensors, same") {
		t.Fatalf("the wrong state is hidden, or the cut line does not say the rest are the same:\n%s", plain)
	}
}
