package ui

import (
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/components/narration"
)

// scrollState is how far the narration or the log view is scrolled. It
// belongs to what it scrolls (target): a new step or another process's
// logs start unscrolled, without Update having to reset anything.
type scrollState struct {
	target string
	offset int
}

// scrollStep is how many lines [ and ] move.
const scrollStep = 3

// scrollTarget names what the scroll keys act on now: the log view, the
// narration of a step, or nothing.
func (m Model) scrollTarget() string {
	switch {
	case m.overlay.is(pickerPanel):
		return ""
	case m.overlay.is(logsPanel):
		return "logs:" + m.logName
	case m.overlay.is(partitionsPanel) && !m.overlay.is(whyPanel):
		return "partitions"
	case m.narration != nil:
		return "narration:" + m.narration.Name + "/" + m.narration.StepTitle + "/" + boolWord(m.narration.Done)
	}
	return ""
}

func boolWord(b bool) string {
	if b {
		return "done"
	}
	return "running"
}

// scrollOffset is the offset of the current target (0 when it changed).
func (m Model) scrollOffset() int {
	if t := m.scrollTarget(); t != "" && m.scroll.target == t {
		return m.scroll.offset
	}
	return 0
}

// scrollBy handles [ and ] (pgup, pgdown): up or down by scrollStep. The
// offset stays within what the current size shows.
func (m Model) scrollBy(up bool) Model {
	target := m.scrollTarget()
	if target == "" || m.width < MinWidth || m.height < MinHeight {
		return m
	}
	sc := m.screen()
	off := m.scrollOffset()
	if m.overlay.is(logsPanel) {
		// Logs scroll back from the newest line: [ goes back in time.
		bw, bh := logsBody(m.width, sc.wholeLowerH(), sc.full)
		limit := m.logsPanel(bw).MaxBack(bh)
		if up {
			off += scrollStep
		} else {
			off -= scrollStep
		}
		m.scroll = scrollState{target: target, offset: max(0, min(off, limit))}
		return m
	}
	if target == "partitions" {
		bw, bh := partitionsBody(m.width, sc.middleH, sc.full)
		limit := max(0, len(m.partitionsDetail(bw))-bh)
		if up {
			off -= scrollStep
		} else {
			off += scrollStep
		}
		m.scroll = scrollState{target: target, offset: max(0, min(off, limit))}
		return m
	}
	w, h := narrationBody(m.width, sc.eventsH, sc.full)
	p := m.narrationPanel()
	limit := p.MaxOffset(w, h)
	// Never more than the lines in view: a short viewport skips no line.
	step := max(1, min(scrollStep, p.BodyHeight(w, h)))
	if up {
		off -= step
	} else {
		off += step
	}
	m.scroll = scrollState{target: target, offset: max(0, min(off, limit))}
	return m
}

// narrationBody is the narration's body size in an area of w×h.
func narrationBody(w, h int, full bool) (int, int) {
	if full {
		return w - 2, h - 2
	}
	return w, h - 1
}

// narrationPanel is the narration as the view shows it.
func (m Model) narrationPanel() narration.Panel {
	p := narration.Panel{Styles: m.styles, Progress: *m.narration, Selected: m.selected,
		Now: m.board.Now(), Offset: m.scrollOffset(), OffScript: m.offScript}
	evs := m.board.Events()
	if len(evs) > 0 {
		p.Latest = &evs[len(evs)-1]
	}
	if n := m.narration; !n.Done {
		p.Watched = stepEvent(evs, n.Event, n.StepAt)
		if p.Watched == nil {
			p.Watched = stepEvent(evs, n.PrevEvent, n.PrevAt)
		}
	}
	return p
}

// stepEvent is the latest event since from whose text contains part (nil:
// none, or no part); the scenario's own notes are not a step's event.
func stepEvent(evs []board.Event, part string, from time.Time) *board.Event {
	if part == "" {
		return nil
	}
	for i := len(evs) - 1; i >= 0 && !evs[i].At.Before(from); i-- {
		if strings.Contains(evs[i].Text, part) && !strings.HasPrefix(evs[i].Text, "scenario ") {
			return &evs[i]
		}
	}
	return nil
}
