package producer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// publishLoop is Run's state once publishing starts: one method per thing
// that can happen.
type publishLoop struct {
	cfg   Config
	em    *status.Emitter
	log   *slog.Logger
	pub   *publisher
	fleet *Fleet

	known  []bool // see knownSensors
	sent   []int  // messages sent per sensor
	paused bool
	stall  *stallWatch
}

func (l *publishLoop) run(ctx context.Context) error {
	tick := time.NewTicker(l.cfg.Interval)
	defer tick.Stop()
	report := time.NewTicker(progressEvery)
	defer report.Stop()
	flushAcked := time.NewTicker(AckedFlushEvery)
	defer flushAcked.Stop()
	for {
		select {
		case <-ctx.Done():
			l.stop()
			return nil
		case c := <-l.cfg.Control:
			l.control(ctx, c)
		case <-tick.C:
			if done, err := l.tick(ctx); done {
				return err
			}
		case req := <-l.cfg.Inject:
			l.inject(ctx, req)
		case req := <-l.cfg.History:
			l.history(ctx, req)
		case req := <-l.cfg.AcksSwitch:
			if err := l.switchAcks(ctx, req); err != nil {
				return err
			}
		case <-flushAcked.C:
			l.pub.flushAcked()
		case <-report.C:
			l.pub.checkBack()
			l.stall.check(time.Now(), l.paused)
			l.progress()
		case err := <-l.pub.fatal:
			if err := l.pub.recoverFrom(err); err != nil {
				return err
			}
		}
	}
}

// progress reports the acknowledged count and, while records wait for
// their acknowledgement, how many and for how long none came: the
// scenarios see writes held (acks=all waiting for a frozen follower)
// within a second, before the Blocked report.
func (l *publishLoop) progress() {
	ev := status.Event{Type: status.Progress, Produced: l.pub.sent(), Sensors: l.cfg.Sensors}
	if n := l.pub.enqueued.Load() - l.pub.reported.Load(); n > 0 {
		ev.Count = n
		ev.Millis = time.Since(time.Unix(0, l.pub.lastAck.Load())).Milliseconds()
	}
	l.em.Emit(ev)
}

// stop flushes what it can after ctx ended.
func (l *publishLoop) stop() {
	l.em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
	timeout := stopFlushTimeout
	if l.pub.down.Load() {
		timeout = downFlushTimeout // nothing will be delivered: do not hold the exit
	}
	left := l.pub.flush(context.Background(), timeout)
	l.progress()
	l.log.Info("producer stopped", "delivered", l.pub.delivered.Load(), "failed", l.pub.failed.Load(), "unflushed", left)
}

// control pauses or resumes; a pause of a paused producer (or a resume of
// a running one) does nothing.
func (l *publishLoop) control(ctx context.Context, c Control) {
	switch {
	case c == Pause && !l.paused:
		l.paused = true
		left := l.pub.flush(ctx, stopFlushTimeout)
		l.pub.flushAcked()
		l.log.Info("paused", "delivered", l.pub.delivered.Load(), "unflushed", left)
		l.progress()
		l.em.Emit(status.Event{Type: status.Paused, Produced: l.pub.sent()})
	case c == Resume && l.paused:
		l.paused = false
		l.log.Info("resumed")
		l.em.Emit(status.Event{Type: status.Resumed, Produced: l.pub.sent()})
	}
}

// tick sends one message per sensor that has not reached Count. done: every
// sensor has, and Run returns err.
func (l *publishLoop) tick(ctx context.Context) (done bool, err error) {
	if l.paused {
		return false, nil
	}
	now := time.Now()
	done = true
	for i := range l.sent {
		if l.cfg.Count > 0 && l.sent[i] >= l.cfg.Count {
			continue
		}
		if l.cfg.Park != "" && SensorID(i, l.cfg.Sensors) == l.cfg.Park {
			// Parked: it never reaches a count, and holds no run open.
			done = done && l.cfg.Count > 0
			continue
		}
		l.pub.produce(l.fleet.Next(i, now))
		l.known[i] = true
		l.sent[i]++
		if l.cfg.Count == 0 || l.sent[i] < l.cfg.Count {
			done = false
		}
	}
	if !done {
		return false, nil
	}
	left := l.pub.flush(ctx, doneFlushTimeout)
	l.progress()
	l.log.Info("count reached", "delivered", l.pub.delivered.Load(), "failed", l.pub.failed.Load(), "unflushed", left)
	if n := l.pub.failed.Load(); n > 0 || left > 0 {
		return true, fmt.Errorf("producer: %d deliveries failed, %d not flushed", n, left)
	}
	return true, nil
}

// inject publishes the bad records req asks for and replies once they are
// delivered, without holding the loop.
func (l *publishLoop) inject(ctx context.Context, req InjectRequest) {
	// Sensors with no message yet get one first, so a backwards
	// record has a valid one to go back from.
	for i := range l.known {
		if !l.known[i] {
			l.pub.produce(l.fleet.Next(i, time.Now()))
			l.known[i], l.sent[i] = true, l.sent[i]+1
		}
	}
	wait := l.pub.produceBad(BadRecords(req.N, l.cfg.Sensors, l.fleet.Last))
	go func() {
		res := wait(ctx)
		reportInjected(l.em, l.log, res, l.pub.sent())
		req.Reply <- res
	}()
}
