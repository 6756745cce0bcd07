package producer

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// stallWatch tells when the producer is blocked: records buffered
// (enqueued, no delivery report yet) and no acknowledgement for more than
// BlockedAfter. librdkafka retries such records by itself until
// message.timeout.ms, reporting nothing: an acks=all write refused with
// NOT_ENOUGH_REPLICAS (ISR below min.insync.replicas) is retried silently,
// so without this the producer looked healthy while nothing landed. It is
// checked at every progress tick (1 s), so it shows 2-3 s after the last
// acknowledgement. Only the Run loop uses it.
type stallWatch struct {
	pub *publisher
	// delivered at the last check, and when it last moved (or when
	// nothing was buffered).
	delivered int64
	moved     time.Time
	// blocked: since when a Blocked event says so (zero: not blocked);
	// said: when it was last written.
	blocked, said time.Time
	// count: records buffered as the latest Blocked event said.
	count int64
}

func (w *stallWatch) check(now time.Time, paused bool) {
	delivered := w.pub.delivered.Load()
	buffered := w.pub.enqueued.Load() - w.pub.reported.Load()
	acked := delivered != w.delivered
	if w.moved.IsZero() || acked || buffered <= 0 {
		w.delivered, w.moved = delivered, now
		if !w.blocked.IsZero() {
			ev := status.Event{Type: status.Unblocked, Count: w.count, Millis: now.Sub(w.blocked).Milliseconds()}
			if !acked {
				// Nothing acknowledged, nothing buffered: they failed.
				ev.Error = "the buffered records failed (see the delivery errors)"
			}
			w.pub.log.Info("unblocked", "blocked_for", now.Sub(w.blocked), "acked", acked)
			w.pub.em.Emit(ev)
			w.blocked = time.Time{}
		}
		return
	}
	stalled := now.Sub(w.moved)
	if paused || stalled <= BlockedAfter {
		return
	}
	if w.blocked.IsZero() {
		w.blocked = w.moved
	} else if now.Sub(w.said) < blockedRepeat {
		return
	}
	w.said, w.count = now, buffered
	ev := status.Event{Type: status.Blocked, Count: buffered, Millis: stalled.Milliseconds()}
	// The broker's answer, if librdkafka logged one since the last ack.
	if e := w.pub.lastErr.Load(); e != nil && !e.at.Before(w.moved.Add(-progressEvery)) {
		ev.Error = e.text
	}
	w.pub.log.Warn("blocked: records buffered, none acknowledged", "buffered", buffered, "for", stalled, "error", ev.Error)
	w.pub.em.Emit(ev)
}
