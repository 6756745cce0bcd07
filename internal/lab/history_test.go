package lab

import (
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// TestHistoryWant: the next topic size comes from the measured rate (the
// span shown replaying, else caught_up's own time), aimed past the target,
// and always grows the topic.
func TestHistoryWant(t *testing.T) {
	for _, c := range []struct {
		name string
		v    board.ProcView
		size int64
		want int64
	}{
		{"an empty topic: the first burst", board.ProcView{Current: &board.CurrentView{CaughtUpMessages: 0, CaughtUpMillis: 100}}, 0, historyFirst},
		{"a short replay: the rate times the target", board.ProcView{Current: &board.CurrentView{CaughtUpMessages: 100_000, CaughtUpMillis: 400, ReplayShown: 250 * time.Millisecond}}, 100_000, 1_500_000},
		{"almost there: a quarter more at least", board.ProcView{Current: &board.CurrentView{CaughtUpMessages: 1_000_000, CaughtUpMillis: 3500, ReplayShown: 3400 * time.Millisecond}}, 1_000_000, 1_250_000},
		{"never past the limit", board.ProcView{Current: &board.CurrentView{CaughtUpMessages: 9_000_000, CaughtUpMillis: 1000, ReplayShown: time.Second}}, 9_000_000, historyMax},
	} {
		if got := historyWant(c.v, c.size, 3*time.Second); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
