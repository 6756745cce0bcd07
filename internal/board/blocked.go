package board

import (
	"fmt"
	"strings"
	"time"
)

// sayBlocked puts the producer's block on the timeline: at its start, and
// again when its cause changes (a broker away, then the ISR below
// min.insync.replicas), whether the producer or the metadata said so.
func (b *Board) sayBlocked(at time.Time, p *proc, first bool) {
	cause := b.blockedCause(p)
	// A cause already given, even in other words (the producer's, then
	// the metadata's figures), is no news; nor is falling back to one.
	if !first && (cause == "" || p.producer.blockedSaid[causeName(cause)]) {
		return
	}
	// Short enough for one line of the events panel at 120 columns.
	text := fmt.Sprintf("blocked: %d buffered, no ack for %.1f s", p.producer.buffered, at.Sub(p.producer.blockedSince).Seconds())
	if !first {
		text = "still " + text
	}
	if cause != "" {
		text += ": " + cause
	}
	if p.producer.blockedSaid == nil {
		p.producer.blockedSaid = map[string]bool{}
	}
	p.producer.blockedSaid[causeName(cause)] = true
	// While it retries an unreachable broker, that is the news.
	level := LevelBad
	if p.state == Retrying {
		level = LevelWarn
	}
	b.event(at, p.name, level, text)
}

// causeName is a cause's error name: "NOT_ENOUGH_REPLICAS (isr 1 < ...)"
// gives "NOT_ENOUGH_REPLICAS".
func causeName(cause string) string {
	name, _, _ := strings.Cut(cause, " (")
	return name
}

// blockedCause: why the producer is blocked, as far as the board knows:
// the broker's answer the producer reported (librdkafka's log of the
// produce error it retries), with the figures of the latest metadata when
// it is NOT_ENOUGH_REPLICAS and the metadata shows it too; the metadata's
// when the producer reported none, or only a client-side error ("Local:
// Broker transport failure": the broker it wrote to died, and since then
// the ISR shrank below min.insync.replicas, which is now why).
func (b *Board) blockedCause(p *proc) string {
	meta := b.NotEnoughReplicas()
	if b.acksUnrefused() {
		meta = "" // acks=1 and acks=0 are not refused below min.insync.replicas
	}
	switch {
	case p.producer.blockedErr == "":
		return meta
	case meta != "" && (strings.HasPrefix(p.producer.blockedErr, "NOT_ENOUGH_REPLICAS ") || strings.HasPrefix(p.producer.blockedErr, "Local: ")):
		return meta
	}
	return p.producer.blockedErr
}
