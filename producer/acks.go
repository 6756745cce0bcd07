package producer

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// AcksRequest asks the publishing loop to switch the acks setting; the
// result comes on Reply (buffered by the sender).
type AcksRequest struct {
	To    lesson.Acks
	Reply chan AcksResult
}

// AcksResult is what a switch did: the setting in force after it, how
// many records it waited for, and how long it took.
type AcksResult struct {
	Acks    string `json:"acks"`
	Flushed int64  `json:"flushed"`
	Millis  int64  `json:"millis"`
	Error   string `json:"error,omitempty"`
}

// switchAcks serves an AcksRequest on the publishing loop. librdkafka
// cannot change acks (nor idempotence, which acks=1 and acks=0 turn off) on a live
// producer: every record in flight is flushed first, then the producer is
// closed and a new one made with the new setting. A flush that does not
// finish (the broker refuses the writes) refuses the switch: closing would
// drop the records still waiting. err is a new producer that could not be
// made, which ends Run.
func (l *publishLoop) switchAcks(ctx context.Context, req AcksRequest) (err error) {
	start := time.Now()
	res := AcksResult{Acks: string(l.pub.acks)}
	defer func() { req.Reply <- res }()
	if req.To == l.pub.acks {
		return nil
	}
	before := l.pub.delivered.Load()
	if left := l.pub.flush(ctx, stopFlushTimeout); left > 0 {
		res.Error = fmt.Sprintf("%d records still unacknowledged after %s: switching would drop them (try again once they land)",
			left, stopFlushTimeout)
		return nil
	}
	res.Flushed = l.pub.delivered.Load() - before
	l.pub.acks = req.To
	if err := l.pub.restart(); err != nil {
		res.Error = err.Error()
		return err
	}
	res.Acks, res.Millis = string(req.To), time.Since(start).Milliseconds()
	l.log.Info("acks switched", "acks", req.To, "flushed", res.Flushed, "took", time.Since(start).Round(time.Millisecond))
	l.em.Emit(status.Event{Type: status.AcksSet, Acks: string(req.To), Millis: res.Millis, Count: res.Flushed})
	return nil
}

// acksHandler serves POST /acks?to=all|1|0: the request is handed to the
// publishing loop and answered once the new producer runs.
func acksHandler(ctx context.Context, acks chan<- AcksRequest) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		to, err := lesson.ParseAcks(r.URL.Query().Get("to"))
		if err != nil {
			http.Error(w, "to: "+err.Error(), http.StatusBadRequest)
			return
		}
		req := AcksRequest{To: to, Reply: make(chan AcksResult, 1)}
		if !handOff(ctx, w, r, acks, req) {
			return
		}
		var res AcksResult
		select {
		case res = <-req.Reply:
		case <-r.Context().Done():
			return
		}
		writeReply(w, res, res.Error != "", http.StatusConflict)
	}
}
