// Package lab is the dashboard's runtime: it starts the stack as supervised
// child processes, polls what the consumers answer, runs the independent
// audit, and turns all of it into board inputs. The TUI and the headless
// mode both sit on top of it; neither does I/O of its own.
package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// Config is what the dashboard's flags decide.
type Config struct {
	// Exe is the binary whose subcommands are the roles ("" = this one).
	Exe string
	// RunDir holds the embedded data (broker/, store/) and logs/.
	RunDir string
	// Brokers and Mongo point at external infrastructure; "" starts the
	// embedded broker or store.
	Brokers string
	Mongo   string
	Topic   string
	// Cluster > 0 starts a real Apache Kafka cluster of that many brokers
	// (processes controller, broker-1..N) instead of the embedded broker.
	Cluster int
	// Producer settings.
	Sensors  int
	Interval time.Duration
	Seed     int64
	// consumer-usage's starting strategy.
	UsageMode  string
	UsageReset string
	// Rebuild is how consumer-current rebuilds at a start ("" = replay).
	Rebuild string
	// UsageGroup is consumer-usage's fixed group with reset latest ("" =
	// kafkacfg.UsageGroupID). Two dashboards sharing a broker need their
	// own: consumer-usage is a static member of its group, and a second
	// member with the same instance id fences the first.
	UsageGroup string
	// UsageCmd, when set, is the user's consumer-usage: a program and its
	// arguments, run in place of the built-in one (yours.go).
	UsageCmd []string
	// Retention gives the topic a short retention at the start
	// (--retention; 0: the topic's own; SetRetention).
	Retention time.Duration
	// Resumed: the run continues an earlier one in RunDir (--resume).
	Resumed bool
	// StoreLatency delays every request to the embedded store by this much
	// (store --latency): the "slow store" fault. 0: none.
	StoreLatency time.Duration
	// OffsetsRetention: how long the lab's broker keeps a group's commits
	// once the group is empty (--offsets-retention; 0: the broker's
	// default). An external broker keeps its own.
	OffsetsRetention time.Duration
	// ConnectTimeout bounds the first contact with the broker and the
	// store before the lesson's processes start (0: DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Log receives the lab's own diagnostics (never the terminal in TUI mode).
	Log *slog.Logger
}

// processes is what the lab asks of its supervisor (a fake in tests).
type processes interface {
	Define(spec supervisor.Spec) error
	SetArgs(name string, args []string) error
	Events() <-chan supervisor.Event
	PID(name string) int
	Running(name string) bool
	Tail(name string, n int) []string
	Start(name string) error
	Crash(name string) error
	Stop(name string) error
	Restart(name string) error
	Signal(name string, sig syscall.Signal) error
	Freeze(name string) error
	Thaw(name string) error
	Frozen(name string) bool
	KillAll()
	Shutdown(ctx context.Context) error
}

// Lab supervises one run.
//
// It owns the run's settings (settings.go) and announces every change of
// them to the board. Its board (the mirror) is the one source of what the
// run's processes did and said: the addresses in use, consumer-usage's
// group, whether the producer is paused; the lab keeps no copies of them.
//
// Locks, always taken in this order: changeMu, procMu, launchMu, mu.
// changeMu makes a change to the run one step (a setting switched and
// applied, a pause, a reset-lab, a scale, a recreate-topic): a toggle
// pressed twice quickly alternates. procMu does the same for a process's
// own toggles (freeze, crash point). launchMu makes a launch of the
// lesson's processes one attempt. mu guards the settings, the mirror and
// the pump's notes, and is never held across I/O.
type Lab struct {
	cfg     Config
	log     *slog.Logger
	sup     processes
	out     chan board.Input
	started time.Time

	embeddedBroker, embeddedStore bool

	changeMu, procMu sync.Mutex

	mu        sync.Mutex
	settings  settings
	mirror    *board.Board
	changed   chan struct{} // closed (and replaced) at every input the mirror takes
	httpAddrs map[string]httpEndpoint
	runPID    map[string]int // the latest Started pid per process, as the pump has seen it
	listening map[string]chan listenResult
	arms      map[string]armNote
	readErrs  map[string]string // per poll its latest error ("" none): logReadError
	// retention: the short retention the lab gave the topic (0: none);
	// parked: the sensor the producer does not publish ("" none).
	retention time.Duration
	parked    string
	// resets counts reset-labs begun; resetting: one is under way.
	resets    int
	resetting bool

	offsets *observe.Offsets
	auditor *audit.Reader
	db      *store.Store
	// yoursDB: the database of the user's consumer-usage (UsageCmd);
	// yoursNext: when pollYoursUsage (its goroutine only) scans it again.
	yoursDB   *store.Store
	yoursNext time.Time
	// causes is pollUsage's attribution of the drifts (its goroutine only),
	// as of reset-lab causesEpoch.
	causes      *audit.Attribution
	causesEpoch int
	// boardCauses: each sensor's causes as last handed to the board, kept
	// while the attribution hands out the same slice.
	boardCauses map[string]convertedCauses
	// cpRead: pollUsage's last read of the checkpoints (checkpoints.go).
	cpRead checkpointRead

	// launchMu guards launched, defined and failed: the lesson's processes
	// were started (launchRoles succeeded), defined in the supervisor, or
	// could not be started (the last launchRoles failed).
	launchMu                  sync.Mutex
	launched, defined, failed bool
	runCtx                    context.Context

	// stopAudit ends the audit reader running: recreate-topic replaces
	// it (so the pollers read auditor through reader()).
	stopAudit func()

	quitOnce sync.Once
	quit     chan struct{}
	cancel   context.CancelFunc
	pollers  sync.WaitGroup // pollers and the audit: they emit, so they end before out closes
	pumpDone chan struct{}
}

// Processes lists the names this configuration supervises, in key order:
// the lesson's roles, then the Kafka nodes and the store unless they are
// external.
func (c Config) Processes() []string {
	names := role.Lesson()
	switch {
	case c.Cluster > 0:
		names = append(names, role.ClusterNames(c.Cluster)...)
	case c.Brokers == "":
		names = append(names, board.Broker)
	}
	if c.Mongo == "" {
		names = append(names, board.Store)
	}
	return names
}

// New prepares a run; Launch starts it.
func New(cfg Config) (*Lab, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RunDir == "" {
		return nil, errors.New("lab: no run directory")
	}
	if err := os.MkdirAll(cfg.RunDir, 0o755); err != nil {
		return nil, fmt.Errorf("lab: run directory: %w", err)
	}
	l := &Lab{
		cfg:            cfg,
		log:            cfg.Log,
		out:            make(chan board.Input, 4096),
		embeddedBroker: cfg.Brokers == "" && cfg.Cluster == 0,
		embeddedStore:  cfg.Mongo == "",
		changed:        make(chan struct{}),
		httpAddrs:      map[string]httpEndpoint{},
		runPID:         map[string]int{},
		listening:      map[string]chan listenResult{},
		arms:           map[string]armNote{},
		readErrs:       map[string]string{},
		settings:       initialSettings(cfg),
		quit:           make(chan struct{}),
	}
	l.sup = supervisor.New(supervisor.Config{Exe: cfg.Exe, RunDir: cfg.RunDir, StopTimeout: 6 * time.Second})
	l.mirror = l.NewBoard()
	// Its events are printed headless and go into reports: no keys there.
	l.mirror.SetKeyless()
	return l, nil
}

// NewBoard returns a board as the lab's own starts: a front end that feeds
// it every input from Inputs, from before Launch on, holds the same board.
func (l *Lab) NewBoard() *board.Board {
	return board.New(l.cfg.Processes(), board.Config{
		Brokers:    l.cfg.Brokers,
		Mongo:      l.cfg.Mongo,
		RunDir:     l.cfg.RunDir,
		Topic:      l.cfg.Topic,
		UsageMode:  l.cfg.UsageMode,
		UsageReset: l.cfg.UsageReset,
		Rebuild:    l.cfg.Rebuild,
		UsageCmd:   strings.Join(l.cfg.UsageCmd, " "),
		Seed:       l.cfg.Seed,
		Resumed:    l.cfg.Resumed,

		OffsetsRetention: l.cfg.OffsetsRetention,
	})
}

// Inputs delivers board inputs in order. It is closed after Shutdown.
func (l *Lab) Inputs() <-chan board.Input { return l.out }

// Done is closed when a script or a signal asked the run to end.
func (l *Lab) Done() <-chan struct{} { return l.quit }

// RequestQuit asks the front end to end the run.
func (l *Lab) RequestQuit() { l.quitOnce.Do(func() { close(l.quit) }) }

// Addresses returns the Kafka bootstrap servers and MongoDB URI in use.
func (l *Lab) Addresses() (brokers, mongo string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.mirror.Config()
	return c.Brokers, c.Mongo
}

// Report is the board's JSON snapshot as of now.
func (l *Lab) Report() board.Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mirror.Report()
}

// EventsSince returns the timeline entries after seq (headless logging).
func (l *Lab) EventsSince(seq uint64) []board.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mirror.EventsSince(seq)
}

// emit applies an input to the lab's board and hands the same input to
// the front end: the only way anything reaches either board.
func (l *Lab) emit(in board.Input) {
	l.mu.Lock()
	l.mirror.Apply(in)
	l.notifyLocked()
	l.mu.Unlock()
	l.out <- in
}

// notifyLocked wakes every waitBoard to check its condition again.
func (l *Lab) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// waitBoard waits until cond holds on the lab's board, re-checking it at
// every input (and every address or arm the pump notes); false when
// timeout passed first. cond runs with l.mu held.
func (l *Lab) waitBoard(timeout time.Duration, cond func(*board.Board) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		ok := cond(l.mirror)
		changed := l.changed
		l.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}
