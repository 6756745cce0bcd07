package lab

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

const (
	// historyMax bounds the topic History grows (the producer's limit of
	// one request, and --preload's).
	historyMax = 10_000_000
	// historyFirst is the least a first burst publishes: a replay of a few
	// hundred messages is all startup and says nothing about the rate.
	historyFirst = 100_000
	// historyAim: each burst aims this much past the target, so the
	// measured replay lands above it despite a slower moment.
	historyAim = 1.25
	// historyRounds bounds the measure-and-publish rounds.
	historyRounds = 6
)

// History makes the topic long enough that consumer-current's replay from
// earliest shows its progress for at least target: it reads how long the
// last replay took (its caught_up and the board's replaying span), and
// while that is shorter than target, has the producer publish a burst of
// history sized from the measured rate (POST /history) and restarts
// consumer-current to measure again. consumer-usage does not count the
// burst: it is stopped before the first one and starts again from the end
// of the topic on a new baseline (as after --preload, where it starts after
// the backlog), so the usage audit stays exact.
func (l *Lab) History(ctx context.Context, target time.Duration) (err error) {
	strategy := string(l.settingsNow().rebuild)
	if strategy != string(lesson.Replay) {
		return fmt.Errorf("history %s: it times consumer-current's replay, and consumer-current rebuilds by %s: switch to replay first (rebuild replay, or B)", target, strategy)
	}
	published := false
	// However it ends (done, failed, or its scenario stopped), a stopped
	// consumer-usage runs again, on a new baseline.
	defer func() {
		if published {
			if rerr := l.ResetLab(); err == nil {
				err = rerr
			}
		}
	}()
	starts := 0
	for round := 1; ; round++ {
		v, size, err := l.measuredReplay(ctx, starts)
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		if v.Current.ReplayShown >= target && v.Current.CaughtUpMessages >= size*9/10 {
			l.Note(fmt.Sprintf("history: a replay of %s messages takes %.1f s (target %s)",
				board.Count(v.Current.CaughtUpMessages), v.Current.ReplayShown.Seconds(), target))
			break
		}
		if round > historyRounds || size >= historyMax {
			return fmt.Errorf("history: a replay of %s still takes %.1f s, under %s",
				board.Plural(size, "message"), v.Current.ReplayShown.Seconds(), target)
		}
		want := historyWant(v, size, target)
		if !published {
			if err := l.stopUsage(); err != nil {
				return fmt.Errorf("history: %w", err)
			}
			published = true
		}
		why := fmt.Sprintf("last replay: %s in %.1f s", board.Count(v.Current.CaughtUpMessages), replaySeconds(v).Seconds())
		if err := l.publishHistory(ctx, want-size, why); err != nil {
			return err
		}
		starts = l.process(board.Current).Starts + 1
		if err := l.Restart(board.Current); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	return nil
}

// measuredReplay waits until consumer-current, started at least starts
// times, caught up since it last started, and returns its row and the
// topic's size then.
func (l *Lab) measuredReplay(ctx context.Context, starts int) (board.ProcView, int64, error) {
	var v board.ProcView
	var size int64
	err := l.waitUntil(ctx, func(b *board.Board) bool {
		v = b.Process(board.Current)
		hwm, _ := b.HighWatermarks()
		size = 0
		for _, h := range hwm {
			size += h
		}
		return v.Alive && v.Pending == "" && v.Current.CaughtUp && v.Starts >= starts
	})
	return v, size, err
}

// process is name's row on the lab's board.
func (l *Lab) process(name string) board.ProcView {
	var v board.ProcView
	l.Observe(func(b *board.Board) { v = b.Process(name) })
	return v
}

// replaySeconds is how long the replay v reports took to read: the span
// the board showed it replaying, or, when it caught up before its first
// progress report, its whole start (caught_up's own figure).
func replaySeconds(v board.ProcView) time.Duration {
	if v.Current.ReplayShown > 0 {
		return v.Current.ReplayShown
	}
	return time.Duration(v.Current.CaughtUpMillis) * time.Millisecond
}

// historyWant is the topic size the next burst aims at: the measured rate
// times the target (with historyAim), at least a quarter more than now and
// at least historyFirst more, at most historyMax.
func historyWant(v board.ProcView, size int64, target time.Duration) int64 {
	secs := max(replaySeconds(v).Seconds(), 0.001)
	rate := float64(max(v.Current.CaughtUpMessages, 1)) / secs
	want := int64(math.Ceil(rate * target.Seconds() * historyAim))
	want = max(want, size+size/4, size+historyFirst)
	return min(want, historyMax)
}

// stopUsage stops every running consumer-usage instance (ResetLab starts
// them again from the end of the topic).
func (l *Lab) stopUsage() error {
	instances := l.usageInstances()
	for i := len(instances) - 1; i >= 0; i-- {
		if name := instances[i]; l.sup.Running(name) {
			if err := l.Stop(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// publishHistory asks the running producer for n messages of history and
// returns once they are delivered; why is said on the timeline meanwhile.
func (l *Lab) publishHistory(ctx context.Context, n int64, why string) error {
	return l.act(board.Producer, board.OpHistory, func(name string) error {
		// After the request's own event: the latest event while it publishes.
		l.Note(fmt.Sprintf("history: publishing %s messages (%s)", board.Count(n), why))
		addr, err := l.awaitHTTP(name, 40*time.Second)
		if err != nil {
			return fmt.Errorf("the producer is not publishing yet (it waits for the broker): %w", err)
		}
		// The producer publishes some 100k messages a second; librdkafka
		// reports every one within its message timeout.
		timeout := time.Duration(n/20_000)*time.Second + kafkacfg.ProducerMessageTimeout + 20*time.Second
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var res struct {
			Delivered     int64   `json:"delivered"`
			Millis        int64   `json:"millis"`
			AdvancedHours float64 `json:"advanced_hours"`
			StampedMillis int64   `json:"stamped_millis"`
		}
		q := url.Values{"n": {strconv.FormatInt(n, 10)}}
		if err := postControl(rctx, addr, "/history", q, "history", &res); err != nil {
			return err
		}
		l.Note(fmt.Sprintf("history: the producer published %s messages in %.1f s",
			board.Count(res.Delivered), float64(res.Millis)/1000))
		if res.AdvancedHours > 0 {
			l.Note(historyAdvance(res.AdvancedHours, res.StampedMillis))
		}
		return nil
	})
}

// historyAdvance says what a burst did to the odometers: each message is
// a step of simulated machine time, and the burst's readings follow the
// sensors' latest ones (a key's timestamps never go back), so engine hours
// grow far faster than the clock. An engineer reading the sensors panel
// asks how a machine ran thousands of hours in seconds: this is the answer.
func historyAdvance(hours float64, stamped int64) string {
	return fmt.Sprintf("history: engine hours moved on by up to %s h in %s of timestamps: every message is a step of "+
		"simulated machine time (0.05-0.20 h), published at once after each sensor's latest reading, not back-dated "+
		"before it (a key's timestamps never go back)", board.Count(int64(math.Round(hours))), time.Duration(stamped)*time.Millisecond)
}

// GrowHistory makes the topic hold at least n messages: the producer
// publishes the difference as one burst of history (POST /history).
// consumer-usage does not count the burst, as with History: it stops
// before it and starts again from the end of the topic on a new baseline.
func (l *Lab) GrowHistory(ctx context.Context, n int64) (err error) {
	if n < 1 || n > historyMax {
		return fmt.Errorf("history: %s messages: want 1 to %s", board.Count(n), board.Count(historyMax))
	}
	if l.offsets == nil {
		return fmt.Errorf("history: the lab has not reached the broker yet")
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	hwm, err := l.offsets.HighWatermarks(hctx, l.cfg.Topic)
	cancel()
	if err != nil {
		return fmt.Errorf("history: the topic's size: %w", err)
	}
	var size int64
	for _, h := range hwm {
		size += h
	}
	if size >= n {
		l.Note(fmt.Sprintf("history: the topic already holds %s messages (%s asked)", board.Count(size), board.Count(n)))
		return nil
	}
	if err := l.stopUsage(); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer func() {
		if rerr := l.ResetLab(); err == nil {
			err = rerr
		}
	}()
	why := fmt.Sprintf("the topic holds %s, %s asked", board.Count(size), board.Count(n))
	if err := l.publishHistory(ctx, n-size, why); err != nil {
		return err
	}
	// The steps after it read the topic's size from the board.
	return l.waitUntil(ctx, func(b *board.Board) bool {
		hwm, _ := b.HighWatermarks()
		var s int64
		for _, h := range hwm {
			s += h
		}
		return s >= n
	})
}
