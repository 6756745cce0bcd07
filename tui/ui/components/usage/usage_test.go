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

// TestNoVerdictBeforeTheFirstCheckpoint: a sensor consumer-usage has not
// checkpointed yet (nothing recorded, no window) says it is waiting, not
// "no window" as if that were a verdict; with records and still no window
// it says so; the total of sensors all waiting waits too.
func TestNoVerdictBeforeTheFirstCheckpoint(t *testing.T) {
	zero := &board.UsageTotals{}
	rows := []board.UsageRow{
		{SensorID: "sensor-01", Recorded: zero, NoWindow: true},
		{SensorID: "sensor-02", Recorded: zero, NoWindow: true},
	}
	v := board.UsageView{Truth: board.Live, Rows: rows, Total: board.UsageRow{SensorID: "total", Recorded: zero}}
	plain := ansi.Strip(Panel{Styles: theme.New(nil), State: v}.View(Width(), 6))
	for _, l := range strings.Split(plain, "\n")[2:5] {
		if !strings.HasSuffix(strings.TrimSpace(l), "waiting") {
			t.Errorf("no waiting word on %q:\n%s", l, plain)
		}
	}
	if strings.Contains(plain, "no window") {
		t.Errorf("a sensor with nothing recorded shows no window:\n%s", plain)
	}
	v.Rows[1].Recorded = &board.UsageTotals{Records: 3, HoursCents: 12}
	plain = ansi.Strip(Panel{Styles: theme.New(nil), State: v}.View(Width(), 6))
	if !strings.Contains(plain, "no window") || strings.Contains(strings.Split(plain, "\n")[4], "waiting") {
		t.Errorf("records without a window, or the total, read wrong:\n%s", plain)
	}
}
