package producer

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// MaxHistory bounds one history request (the dashboard's --preload limit).
const MaxHistory = 10_000_000

// HistoryRequest asks the publishing loop for a burst of history: N
// messages (whole rounds of the sensors, rounded up), published as fast as
// the broker takes them; the result comes on Reply (buffered by the
// sender) once every one of them is delivered.
type HistoryRequest struct {
	N     int
	Reply chan HistoryResult
	// Ctx is the asker's: the burst stops when it ends (the dashboard gave
	// up, or the scenario that asked was stopped), so no history lands
	// after the asker moved on. Nil: the burst runs to its end.
	Ctx context.Context
}

// HistoryResult is what a history request published.
type HistoryResult struct {
	Delivered int64 `json:"delivered"`
	Millis    int64 `json:"millis"`
	// Advanced is how far the burst moved the fleet: the most engine hours
	// one sensor's counter grew by, and the time its readings' timestamps
	// span. One message is a step of simulated machine time (sim.go), and
	// on a topic with recent messages the burst cannot be back-dated, so
	// hours grow far faster than the timestamps: said, not hidden.
	AdvancedHours float64 `json:"advanced_hours"`
	StampedMillis int64   `json:"stamped_millis"`
	Error         string  `json:"error,omitempty"`
}

// publishHistory publishes rounds messages of every sensor of fleet, stamped
// as the history of the last rounds intervals (the last one now), and
// returns once all of them are delivered. Each message is the fleet's next
// one, so odometers only grow and the consumers and the audit read it as
// any other telemetry; a sensor's timestamps never go back, so on a topic
// that already has recent messages the burst is stamped 1 ms apart after
// its last one.
func (pub *publisher) publishHistory(ctx context.Context, fleet *Fleet, sensors, rounds int, interval time.Duration) error {
	base, failed := pub.delivered.Load(), pub.failed.Load()
	start := time.Now()
	for k := range rounds {
		at := start.Add(-time.Duration(rounds-1-k) * interval)
		for i := range sensors {
			pub.produce(fleet.Next(i, at))
		}
		if pub.enqueued.Load()-pub.reported.Load() >= preloadBatch {
			pub.flush(ctx, doneFlushTimeout)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	left := pub.flush(ctx, doneFlushTimeout)
	if n := pub.failed.Load() - failed; n > 0 || left > 0 {
		return fmt.Errorf("history: %d deliveries failed, %d not flushed", n, left)
	}
	pub.log.Info("history published", "topic", pub.cfg.Topic, "messages", pub.delivered.Load()-base,
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}

// history serves a HistoryRequest on the publishing loop: the loop holds
// its ticks meanwhile (the burst is the fleet's next messages), and every
// sensor has a message in the topic after it.
func (l *publishLoop) history(ctx context.Context, req HistoryRequest) {
	burst := ctx
	if req.Ctx != nil {
		var cancel context.CancelFunc
		burst, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(req.Ctx, cancel)()
	}
	start := time.Now()
	// Live messages still in flight land first, so Delivered counts the
	// burst's messages and nothing else.
	l.pub.flush(ctx, doneFlushTimeout)
	base := l.pub.delivered.Load()
	rounds := (req.N + l.cfg.Sensors - 1) / l.cfg.Sensors
	before := make([]telemetry.Message, l.cfg.Sensors)
	for i := range before {
		before[i] = l.fleet.Last(i)
	}
	err := l.pub.publishHistory(burst, l.fleet, l.cfg.Sensors, rounds, l.cfg.Interval)
	if ctx.Err() == nil && burst.Err() != nil {
		// The asker gave up: what was enqueued lands now, not after it
		// moved on (a consumer started at the end of the topic next).
		l.pub.flush(ctx, doneFlushTimeout)
	}
	for i := range l.known {
		l.known[i] = true
	}
	res := HistoryResult{Delivered: l.pub.delivered.Load() - base, Millis: time.Since(start).Milliseconds()}
	for i, b := range before {
		after := l.fleet.Last(i)
		if b.Timestamp == 0 {
			continue // no reading before the burst: nothing it jumped from
		}
		res.AdvancedHours = max(res.AdvancedHours, telemetry.Round2(after.Odometry.HoursTot-b.Odometry.HoursTot))
		res.StampedMillis = max(res.StampedMillis, after.Timestamp-b.Timestamp)
	}
	if err != nil {
		res.Error = err.Error()
	}
	l.progress()
	req.Reply <- res
}

// historyHandler serves POST /history?n=N: the request is handed to the
// publishing loop and answered once the burst is delivered.
func historyHandler(ctx context.Context, history chan<- HistoryRequest) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 || n > MaxHistory {
			http.Error(w, fmt.Sprintf("n=%q: want a number from 1 to %d", r.URL.Query().Get("n"), MaxHistory), http.StatusBadRequest)
			return
		}
		req := HistoryRequest{N: n, Reply: make(chan HistoryResult, 1), Ctx: r.Context()}
		if !handOff(ctx, w, r, history, req) {
			return
		}
		res := <-req.Reply
		writeReply(w, res, res.Error != "", http.StatusServiceUnavailable)
	}
}
