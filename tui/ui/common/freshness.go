package common

import (
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

var freshnessWord = map[board.Freshness]string{
	board.Live:         "● LIVE",
	board.Rebuilding:   "◐ REBUILDING",
	board.Waiting:      "… WAITING",
	board.Down:         "✗ DOWN",
	board.Failing:      "✗ FAILING",
	board.Stale:        "! STALE",
	board.Disconnected: "✗ DISCONNECTED",
}

// StatusWord is a panel's freshness in words and colour: the colour says it
// at a glance, the word says it on a projector that washes colours out.
// With a title (compact layouts have no box title) the panel name comes first.
func StatusWord(st *theme.Styles, f board.Freshness, title string) string {
	word := st.Freshness(f).Render(freshnessWord[f])
	if title != "" {
		word = st.Title.Render(title) + " " + word
	}
	return word
}
