package current

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Defaults of how often the strategy in force is kept up.
const (
	// DefaultSnapshotEvery: a snapshot at least this often (and at a
	// graceful stop).
	DefaultSnapshotEvery = 5 * time.Second
	// DefaultChangelogEvery: one changelog publication this often, of
	// what changed since the last: a million messages of ten sensors
	// make a few records a second, not a million.
	DefaultChangelogEvery = time.Second
)

// preparer keeps up what the next start rebuilds from, while its strategy
// is in force: the snapshot file, or the changelog. It runs beside the
// consumer loop and reads the state under the state's lock, once a tick:
// nothing of it is on a message's way.
type preparer struct {
	cfg Config
	st  *state
	em  *status.Emitter
	log *slog.Logger

	mu       sync.Mutex
	strategy lesson.Rebuild
	// ready: the state is rebuilt (rebuild.go); saving it before would
	// save an empty one over a good one.
	ready   bool
	topicID string
	wrote   time.Time // the latest snapshot's time
	pub     *publisher
	// crashArmed: the next snapshot write kills the process halfway.
	crashArmed bool
	// saved: the strategy in force was saved since it was set (Prepared
	// said so); poke makes the next save come at once.
	saved bool
	poke  chan struct{}
}

func newPreparer(cfg Config, st *state, em *status.Emitter, log *slog.Logger) *preparer {
	return &preparer{cfg: cfg, st: st, em: em, log: log, strategy: cfg.Rebuild,
		pub: newPublisher(cfg.Brokers, cfg.Topic, log), poke: make(chan struct{}, 1)}
}

// rebuilt: the state holds what the start rebuilt; from now on it may be
// saved.
func (p *preparer) rebuilt(topicID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready, p.topicID = true, topicID
}

// savesNow makes the next save come at once.
func (p *preparer) savesNow() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// set makes strategy the one kept up from now on.
func (p *preparer) set(strategy lesson.Rebuild) error {
	if strategy == lesson.Snapshot && p.cfg.Snapshot == "" {
		return errors.New("this consumer-current has no --snapshot file to write")
	}
	p.mu.Lock()
	p.strategy, p.saved = strategy, false
	p.mu.Unlock()
	p.em.Emit(status.Event{Type: status.Prepares, Strategy: string(strategy)})
	p.log.Info("prepares the next start's rebuild", "strategy", strategy)
	p.savesNow()
	return nil
}

// said emits Prepared after the first save since the strategy was set.
func (p *preparer) said(ev status.Event) {
	p.mu.Lock()
	first := !p.saved && p.strategy == lesson.Rebuild(ev.Strategy)
	p.saved = p.saved || first
	p.mu.Unlock()
	if first {
		ev.Type = status.Prepared
		p.em.Emit(ev)
	}
}

func (p *preparer) current() lesson.Rebuild {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.strategy
}

// run keeps the strategy in force up until ctx ends.
func (p *preparer) run(ctx context.Context) {
	t := time.NewTicker(min(p.cfg.SnapshotEvery, p.cfg.ChangelogEvery, time.Second))
	defer t.Stop()
	var published time.Time
	for {
		now := time.Now()
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		case <-p.poke:
			published = time.Time{}
			p.mu.Lock()
			p.wrote = time.Time{}
			p.mu.Unlock()
		}
		switch p.current() {
		case lesson.Snapshot:
			if now.Sub(p.lastWrite()) >= p.cfg.SnapshotEvery {
				p.writeSnapshot()
			}
		case lesson.Changelog:
			if now.Sub(published) >= p.cfg.ChangelogEvery {
				p.publish()
				published = now
			}
		}
	}
}

// final saves the state once more at a graceful stop, and closes the
// changelog's producer.
func (p *preparer) final() {
	switch p.current() {
	case lesson.Snapshot:
		p.writeSnapshot()
	case lesson.Changelog:
		p.publish()
	}
	p.pub.close()
}

func (p *preparer) lastWrite() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wrote
}

// writeSnapshot saves the state to the snapshot file.
func (p *preparer) writeSnapshot() {
	p.mu.Lock()
	ready, topicID, crash := p.ready, p.topicID, p.crashArmed
	p.mu.Unlock()
	if !ready || p.cfg.Snapshot == "" {
		return
	}
	c := p.st.cut()
	now := time.Now().UTC()
	s := snapshot{Version: snapshotVersion, Topic: p.cfg.Topic, TopicID: topicID, TakenAt: now,
		Through: c.through, Sensors: c.sensors, References: c.refs}
	var midWrite func()
	if crash {
		midWrite = func() { p.crash(c) }
	}
	if err := writeSnapshot(p.cfg.Snapshot, s, midWrite); err != nil {
		p.log.Warn("snapshot not written", "path", p.cfg.Snapshot, "err", err)
		return
	}
	p.mu.Lock()
	p.wrote = now
	p.mu.Unlock()
	p.log.Debug("snapshot written", "path", p.cfg.Snapshot, "sensors", len(c.sensors), "through", offsetsText(c.through))
	p.said(status.Event{Strategy: string(lesson.Snapshot), SnapshotAt: now, Sensors: len(c.sensors)})
}

// crash is the mid-snapshot crash point: announced, then a SIGKILL of
// this process with half of the new file written.
func (p *preparer) crash(c cut) {
	p.log.Warn("crash point reached: killing myself in the middle of a snapshot write", "through", offsetsText(c.through))
	p.em.Emit(status.Event{Type: status.CrashPoint, Point: string(lesson.MidSnapshot)})
	_ = os.Stdout.Sync()
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered asynchronously; never continue
}

// publish publishes what changed to the changelog.
func (p *preparer) publish() {
	p.mu.Lock()
	ready, topicID := p.ready, p.topicID
	p.mu.Unlock()
	if !ready {
		return
	}
	c := p.st.cut()
	n, err := p.pub.publish(c, topicID)
	if err != nil {
		p.log.Warn("changelog not published; tried again at the next tick", "err", err)
		return
	}
	p.said(status.Event{Strategy: string(lesson.Changelog), Count: int64(n), Sensors: len(c.sensors)})
}

// routes adds POST /rebuild?strategy=S (what the running process keeps up
// for the next start) and POST /crash-at?point=mid-snapshot|none.
func (p *preparer) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /rebuild", func(w http.ResponseWriter, r *http.Request) {
		s, err := lesson.ParseRebuild(r.URL.Query().Get("strategy"))
		if err == nil {
			err = p.set(s)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"prepares": string(s)})
	})
	mux.HandleFunc("POST /crash-at", func(w http.ResponseWriter, r *http.Request) {
		point := lesson.CrashPoint(r.URL.Query().Get("point"))
		if point != lesson.MidSnapshot && point != lesson.NoCrashPoint {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf(
				"crash point %q: consumer-current has %s (or %s to disarm)", point, lesson.MidSnapshot, lesson.NoCrashPoint)})
			return
		}
		p.mu.Lock()
		p.crashArmed = point == lesson.MidSnapshot
		p.mu.Unlock()
		p.log.Warn("crash point set over HTTP", "point", point)
		p.em.Emit(status.Event{Type: status.CrashPointArmed, Point: string(point)})
		writeJSON(w, http.StatusOK, map[string]string{"armed": string(point)})
	})
}
