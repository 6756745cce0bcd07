// Package lab is the dashboard's runtime: it starts the stack as supervised
// child processes, polls what the consumers answer, runs the independent
// audit, and turns all of it into board inputs. The TUI and the headless
// mode both sit on top of it; neither does I/O of its own.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/audit"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/observe"
	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
	"github.com/kafka-recovery-lab/krl/producer"
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
	// StoreLatency delays every request to the embedded store by this much
	// (store --latency): the "slow store" fault. 0: none.
	StoreLatency time.Duration
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
// Its board (the mirror) is the one source of the run's facts: the
// addresses in use, consumer-usage's group, mode and reset, whether the
// producer is paused. The lab keeps no copies of them; it reads the board,
// under mu, and changes them only by emitting inputs.
type Lab struct {
	cfg     Config
	log     *slog.Logger
	sup     processes
	out     chan board.Input
	started time.Time

	embeddedBroker, embeddedStore bool

	// pauseMu, armMu and switchMu make a toggle read the board and act on
	// it as one step (switchMu also a mode or reset set by a script);
	// baselineMu makes a reset-lab one step. A scale holds baselineMu, then
	// switchMu.
	pauseMu, armMu, switchMu, baselineMu sync.Mutex
	// freezeMu makes z a toggle even when pressed twice quickly;
	// rebuildMu the rebuild key a cycle.
	freezeMu, rebuildMu sync.Mutex

	mu        sync.Mutex
	mirror    *board.Board
	changed   chan struct{} // closed (and replaced) at every input the mirror takes
	httpAddrs map[string]httpEndpoint
	runPID    map[string]int // the latest Started pid per process, as the pump has seen it
	listening map[string]chan listenResult
	arms      map[string]armNote
	readErrs  map[string]string // per poll its latest error ("" none): logReadError
	// baseline counts reset-labs: each gives consumer-usage a group of its
	// own, so it starts at the end of the topic.
	baseline int
	// resets counts reset-labs begun; resetting: one is under way.
	resets    int
	resetting bool

	offsets *observe.Offsets
	auditor *audit.Reader
	db      *store.Store
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

// Launch starts the infrastructure, then the consumers and the producer,
// then the pollers. It returns once every process was started (or failed).
func (l *Lab) Launch(ctx context.Context) error {
	l.started = time.Now()
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.runCtx = runCtx

	l.startPump()
	l.poll(runCtx, 250*time.Millisecond, func(ctx context.Context) { l.emit(board.Tick{Now: time.Now()}) })
	infraFailed := func(cause string, err error) error {
		l.emit(board.LaunchFailed{At: time.Now(), Cause: cause, Err: err})
		return err
	}

	if l.cfg.Cluster > 0 {
		if err := l.startCluster(ctx); err != nil {
			return infraFailed("no cluster", err)
		}
	}
	if l.embeddedBroker {
		// The board learns the address from the broker's Listening event.
		args := append(slices.Clone(role.Lookup(board.Broker).Command),
			"--data-dir", filepath.Join(l.cfg.RunDir, "broker"), "--topic", l.cfg.Topic)
		if _, err := l.startInfra(ctx, board.Broker, args); err != nil {
			return infraFailed("no broker", err)
		}
	}
	if l.embeddedStore {
		// The board makes the URI from the store's Listening event, with no
		// database in it: every role then uses store.DefaultDatabase, and
		// the address shown is the URI the roles were given.
		args := append(slices.Clone(role.Lookup(board.Store).Command), "--data-dir", filepath.Join(l.cfg.RunDir, "store"))
		var first []string
		if l.cfg.StoreLatency > 0 {
			// Slow from the start; a restart (x then r) brings it back at
			// full speed: the slow store's recovery.
			first = []string{"--latency", l.cfg.StoreLatency.String()}
		}
		if _, err := l.startInfra(ctx, board.Store, args, first...); err != nil {
			return infraFailed("no store", err)
		}
	}
	return l.launchRoles(ctx)
}

// DefaultConnectTimeout is how long the lab waits for the broker and the
// store to answer before it says they are down: long enough for a broker
// that is still starting on a busy laptop.
const DefaultConnectTimeout = 15 * time.Second

func (l *Lab) connectTimeout() time.Duration {
	if l.cfg.ConnectTimeout > 0 {
		return l.cfg.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// launchError is why the lesson's processes could not be started, with
// the short cause the board shows in their rows.
type launchError struct {
	cause string
	err   error
}

func (e *launchError) Error() string { return e.err.Error() }
func (e *launchError) Unwrap() error { return e.err }

// launchRoles checks that the broker and the store answer, then starts
// the consumers, the producer and the pollers, once. On failure every
// process not running shows failed with the cause, and a later call (r on
// any of them) tries again.
func (l *Lab) launchRoles(ctx context.Context) error {
	l.launchMu.Lock()
	defer l.launchMu.Unlock()
	if l.launched {
		return nil
	}
	err := l.launchRolesLocked(ctx)
	if err != nil {
		cause := "not started"
		var le *launchError
		if errors.As(err, &le) {
			cause = le.cause
		}
		l.failed = true
		l.emit(board.LaunchFailed{At: time.Now(), Cause: cause, Err: err})
		return err
	}
	l.launched, l.failed = true, false
	return nil
}

// launchFailed reports whether launchRoles failed and has not succeeded since.
func (l *Lab) launchFailed() bool {
	l.launchMu.Lock()
	defer l.launchMu.Unlock()
	return l.failed
}

func (l *Lab) launchRolesLocked(ctx context.Context) error {
	brokers, mongo := l.Addresses()
	if brokers == "" || mongo == "" {
		return &launchError{"no infra", errors.New("the broker or the store has no address yet (did it start? see its log)")}
	}
	var err error
	if l.offsets == nil {
		if l.offsets, err = observe.NewOffsets(brokers, l.log); err != nil {
			return fmt.Errorf("lag reader: %w", err)
		}
	}
	if err := l.ensureTopics(ctx, brokers); err != nil {
		return err
	}
	if err := l.checkStore(ctx, mongo); err != nil {
		return err
	}
	if err := l.startRoles(); err != nil {
		return err
	}
	if l.auditor, err = audit.NewReader(brokers, l.cfg.Topic, l.log); err != nil {
		return fmt.Errorf("audit reader: %w", err)
	}
	l.startPollers()
	return nil
}

// ensureTopics creates the topic and its dead-letter topic if missing: an
// external broker may not have them yet, and consumers subscribed to a
// missing topic would only wait for it.
func (l *Lab) ensureTopics(ctx context.Context, brokers string) error {
	tctx, tcancel := context.WithTimeout(ctx, l.connectTimeout())
	rf, topicConfig := l.replication()
	created, err := l.offsets.EnsureTopicReplicated(tctx, l.cfg.Topic, 3, rf, topicConfig)
	tcancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return &launchError{"Kafka down", fmt.Errorf("no answer from Kafka at %s within %s (is it running? check --brokers / KAFKA_BROKER)", brokers, l.connectTimeout())}
	}
	if err != nil {
		return &launchError{"Kafka error", fmt.Errorf("topic %s on %s: %w", l.cfg.Topic, brokers, err)}
	}
	if created {
		text := fmt.Sprintf("created topic %s with 3 partitions", l.cfg.Topic)
		if rf > 1 {
			text += fmt.Sprintf(", replication factor %d, min.insync.replicas=%s", rf, topicConfig["min.insync.replicas"])
		}
		l.emit(board.Action{At: time.Now(), Text: text})
	}
	dlq := kafkacfg.DeadLetterTopic(l.cfg.Topic)
	tctx, tcancel = context.WithTimeout(ctx, l.connectTimeout())
	created, err = l.offsets.EnsureTopicReplicated(tctx, dlq, kafkacfg.DeadLetterPartitions, rf, topicConfig)
	tcancel()
	if err != nil {
		return &launchError{"Kafka error", fmt.Errorf("dead-letter topic %s on %s: %w", dlq, brokers, err)}
	}
	if created {
		l.emit(board.Action{At: time.Now(), Text: fmt.Sprintf("created dead-letter topic %s", dlq)})
	}
	changelog := kafkacfg.ChangelogTopic(l.cfg.Topic)
	changelogConfig := kafkacfg.ChangelogTopicConfig()
	maps.Copy(changelogConfig, topicConfig)
	tctx, tcancel = context.WithTimeout(ctx, l.connectTimeout())
	created, err = l.offsets.EnsureTopicReplicated(tctx, changelog, kafkacfg.ChangelogPartitions, rf, changelogConfig)
	tcancel()
	if err != nil {
		return &launchError{"Kafka error", fmt.Errorf("changelog topic %s on %s: %w", changelog, brokers, err)}
	}
	if created {
		l.emit(board.Action{At: time.Now(), Text: fmt.Sprintf("created consumer-current's changelog topic %s (compacted)", changelog)})
	}
	return nil
}

// checkStore connects the lab's store client and pings the store.
func (l *Lab) checkStore(ctx context.Context, mongo string) error {
	var err error
	if l.db == nil {
		if l.db, err = store.Connect(ctx, mongo); err != nil {
			return &launchError{"bad --mongo", fmt.Errorf("store: %w (check --mongo / MONGO_URI)", err)}
		}
	}
	pctx, pcancel := context.WithTimeout(ctx, l.connectTimeout())
	err = l.db.Ping(pctx)
	pcancel()
	if err != nil {
		return &launchError{"store down", fmt.Errorf("MongoDB at %s did not answer (is it running? check --mongo / MONGO_URI): %w", redact.String(mongo), err)}
	}
	return nil
}

// startRoles defines the lesson's roles once and starts those not running,
// in start order.
func (l *Lab) startRoles() error {
	if !l.defined {
		for _, name := range roles {
			if err := l.sup.Define(l.roleSpec(name)); err != nil {
				return err
			}
		}
		l.defined = true
	}
	for _, name := range roles {
		if l.sup.Running(name) {
			continue
		}
		if err := l.sup.Start(name); err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
	}
	return nil
}

// startPollers starts the audit and the pollers that feed the board.
func (l *Lab) startPollers() {
	runCtx := l.runCtx
	l.runAudit(l.auditor)
	l.poll(runCtx, 500*time.Millisecond, l.pollOffsets)
	// Leaders and ISRs: a failover is timed to this period.
	l.poll(runCtx, 500*time.Millisecond, l.pollPartitions)
	// The audit's latest messages are taken just before consumer-current's
	// state, so the state is compared with the audit as of the same moment
	// (at most a message that arrived in between makes it "ahead").
	l.poll(runCtx, 500*time.Millisecond, func(ctx context.Context) { l.pollTruth(ctx); l.pollState(ctx) })
	// A usage cut carries its own expectation.
	l.poll(runCtx, time.Second, l.pollUsage)
	l.poll(runCtx, time.Second, l.pollHealth)
	// What the producer was told it wrote, against what the audit reads.
	acked := &ackedPoll{tail: ackedTail{path: AckedLogPath(l.cfg.RunDir)}, check: audit.NewAckCheck()}
	l.poll(runCtx, ackedEvery, func(ctx context.Context) { l.pollAcked(ctx, acked) })
}

// startInfra starts an embedded broker or store on a free port, waits for
// its address, and pins the address for later restarts.
// firstOnly are flags of the first start only.
func (l *Lab) startInfra(ctx context.Context, name string, args []string, firstOnly ...string) (string, error) {
	ch := l.awaitListen(name)
	defer l.forgetListen(name)
	first := append(append(append([]string{}, args...), firstOnly...), "--listen", "127.0.0.1:0")
	if err := l.sup.Define(supervisor.Spec{Name: name, Args: first, Tier: 0, Env: roleEnv(name)}); err != nil {
		return "", err
	}
	if err := l.sup.Start(name); err != nil {
		return "", fmt.Errorf("start %s: %w", name, err)
	}
	select {
	case r := <-ch:
		if r.exit != nil {
			return "", l.exitedBeforeListening(name, *r.exit)
		}
		// Restarts reuse the port so clients reconnect to the same address.
		if err := l.sup.SetArgs(name, append(args, "--listen", r.addr)); err != nil {
			return "", err
		}
		return r.addr, nil
	case <-time.After(60 * time.Second):
		return "", fmt.Errorf("%s did not start listening within 60s; see %s", name,
			filepath.Join(l.cfg.RunDir, "logs", name+".log"))
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// roleSpec is a lesson role's process: its command line, and its
// environment with the store's URI (MONGO_URI: passwords stay off command
// lines).
func (l *Lab) roleSpec(name string) supervisor.Spec {
	_, mongo := l.Addresses()
	return supervisor.Spec{Name: name, Args: l.roleArgs(name), Tier: 1, Env: append(roleEnv(name), "MONGO_URI="+mongo)}
}

// roleEnv is the environment name's role asks for beside the lab's own,
// where the lab's does not already say.
func roleEnv(name string) []string {
	var env []string
	for _, kv := range role.Lookup(name).Env() {
		if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
			env = append(env, kv)
		}
	}
	return env
}

// roles are the processes of the lesson, in start order: consumers first,
// so none misses the producer's first messages.
var roles = role.StartOrder()

// roleArgs is name's command line as the board's facts say now: its
// role's subcommand, the connection flags, and the role's own flags.
func (l *Lab) roleArgs(name string) []string {
	r, _, ok := role.Of(name)
	if !ok || r.Start == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.mirror.Config()
	// The store's URI goes in the environment (roleSpec), where no other
	// user can read it: a command line is world-readable.
	args := append(slices.Clone(r.Command), "--brokers", c.Brokers, "--topic", l.cfg.Topic)
	for _, f := range r.Flags {
		if v, ok := roleFlags[f](l, name); ok {
			args = append(args, f, v)
		}
	}
	return args
}

// roleFlags give the value of each flag a role's entry names, for process
// name; ok false leaves the flag out. l.mu is held.
var roleFlags = map[string]func(l *Lab, name string) (value string, ok bool){
	"--sensors":  func(l *Lab, _ string) (string, bool) { return fmt.Sprint(l.cfg.Sensors), true },
	"--interval": func(l *Lab, _ string) (string, bool) { return l.cfg.Interval.String(), true },
	"--seed":     func(l *Lab, _ string) (string, bool) { return fmt.Sprint(l.cfg.Seed), l.cfg.Seed != 0 },
	"--mode": func(l *Lab, _ string) (string, bool) {
		mode, _ := l.mirror.UsageConfig()
		return mode, true
	},
	"--reset": func(l *Lab, _ string) (string, bool) {
		_, reset := l.mirror.UsageConfig()
		return reset, true
	},
	"--group":       func(l *Lab, name string) (string, bool) { g := l.usageGroupArgLocked(name); return g, g != "" },
	"--instance-id": func(_ *Lab, name string) (string, bool) { return name, name != board.Usage },
	"--rebuild":     func(l *Lab, _ string) (string, bool) { return l.mirror.Rebuild(), true },
	"--snapshot":    func(l *Lab, _ string) (string, bool) { return l.snapshotPath(), true },
	"--acks":        func(l *Lab, _ string) (string, bool) { return l.mirror.AcksSetting(), true },
	"--acked-log":   func(l *Lab, _ string) (string, bool) { return AckedLogPath(l.cfg.RunDir), true },
	"--effect-delay": func(l *Lab, name string) (string, bool) {
		d := l.mirror.EffectDelay(name)
		return d.String(), d > 0
	},
}

func (l *Lab) startPump() {
	l.pumpDone = make(chan struct{})
	go func() { defer close(l.pumpDone); l.pump() }()
}

func anyAuditBehind(cut map[string]audit.Cut) bool {
	for _, c := range cut {
		if c.State == audit.AuditBehind {
			return true
		}
	}
	return false
}

// resetState is how many reset-labs have begun and whether one is under way.
func (l *Lab) resetState() (resets int, resetting bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resets, l.resetting
}

// usageGroup is consumer-usage's fixed group in this baseline ("" = the
// consumer's default).
func (l *Lab) usageGroup() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g := l.usageGroupLocked(); g != "" {
		return g
	}
	return kafkacfg.UsageGroupID
}

func (l *Lab) usageGroupLocked() string {
	g := l.cfg.UsageGroup
	if l.baseline == 0 {
		return g
	}
	if g == "" {
		g = kafkacfg.UsageGroupID
	}
	return fmt.Sprintf("%s-baseline-%d", g, l.baseline)
}

// pump turns supervisor events into board inputs and keeps the addresses
// the pollers need.
func (l *Lab) pump() {
	for ev := range l.sup.Events() {
		switch e := ev.(type) {
		case supervisor.Started:
			l.mu.Lock()
			l.runPID[e.Name] = e.PID
			delete(l.httpAddrs, e.Name)
			l.mu.Unlock()
			l.emit(board.ProcStarted{Name: e.Name, PID: e.PID, At: e.At})
		case supervisor.Exited:
			l.mu.Lock()
			if l.httpAddrs[e.Name].pid == e.PID {
				delete(l.httpAddrs, e.Name)
			}
			l.noteListenLocked(e.Name, listenResult{exit: &e})
			l.mu.Unlock()
			l.emit(board.ProcExited{Name: e.Name, PID: e.PID, At: e.At, ExitCode: e.ExitCode,
				Signal: e.Signal, Deliberate: e.Deliberate})
		case supervisor.Status:
			// The board first: whoever waits on noteStatus's bookkeeping
			// (an infra address, an arm) then finds the board up to date.
			l.emit(board.ProcStatus{Name: e.Name, At: e.At, Event: e.Event})
			l.noteStatus(e.Name, e.Event)
		case supervisor.Log:
			l.emit(board.ProcLog{Name: e.Name, At: e.At, Line: e.Line})
		case supervisor.Frozen:
			l.emit(board.ProcFrozen{Name: e.Name, PID: e.PID, At: e.At, Frozen: e.Frozen})
		}
	}
	close(l.out)
}

func (l *Lab) noteStatus(name string, ev status.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.notifyLocked()
	switch ev.Type {
	case status.Listening:
		if ev.Endpoint == "http" {
			l.httpAddrs[name] = httpEndpoint{addr: ev.Addr, pid: l.runPID[name]}
		}
		if ev.Endpoint != "http" {
			l.noteListenLocked(name, listenResult{addr: ev.Addr})
		}
	case status.CrashPointArmed:
		if pid := l.runPID[name]; l.arms[name].pid == pid {
			l.arms[name] = armNote{pid: pid, n: l.arms[name].n + 1}
		} else {
			l.arms[name] = armNote{pid: pid, n: 1}
		}
	}
}

// poll runs f every period, or every twice f's own duration when that is
// longer: on the embedded store a usage scan costs ~0.13 ms per record
// (BenchmarkUsageTotals), so a long run must not turn the dashboard's polls
// into a busy loop that starves the processes it watches.
func (l *Lab) poll(ctx context.Context, every time.Duration, f func(context.Context)) {
	l.pollers.Add(1)
	go func() {
		defer l.pollers.Done()
		for {
			began := time.Now()
			f(ctx)
			wait := max(every-time.Since(began), time.Since(began))
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
}

func (l *Lab) httpAddr(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.httpAddrLocked(name)
}

func (l *Lab) httpAddrLocked(name string) string {
	ep := l.httpAddrs[name]
	// The pump learns of an exit a moment after the supervisor: an address
	// is only good while the incarnation that announced it still runs
	// (after a crash and a quick start, the old one is a dead port).
	if ep.addr == "" || ep.pid != l.sup.PID(name) {
		return ""
	}
	return ep.addr
}

// httpEndpoint is a process's HTTP address and the pid that announced it.
type httpEndpoint struct {
	addr string
	pid  int
}

func (l *Lab) pollOffsets(ctx context.Context) {
	var group string
	l.Observe(func(b *board.Board) {
		// A just-started consumer-usage has not said its group yet: keep
		// reading the last one's commits meanwhile.
		if group = b.Process(board.Usage).GroupID; group == "" {
			_, group, _ = b.Committed()
		}
	})
	// Commits first, watermarks second, and the watermarks reach the board
	// first: a lag is then a watermark minus an older commit, never the
	// other way round. Read in the opposite order, a consumer committing
	// between the two reads showed a lag of 0 while it still had messages
	// to read (a crash point armed on "caught up" would
	// fire at once). Every sample is stamped with when it was asked for,
	// not answered: a sample stamped after an event (the producer's pause)
	// then really was read after it.
	var (
		committedAsked time.Time
		committed      map[int32]int64
		commitErr      error
	)
	if group != "" {
		committedAsked = time.Now()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		committed, commitErr = l.offsets.Committed(cctx, group, l.cfg.Topic)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.logReadError("committed offsets", commitErr)
	}
	asked := time.Now()
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	hwm, err := l.offsets.HighWatermarks(hctx, l.cfg.Topic)
	cancel()
	if ctx.Err() != nil {
		return
	}
	l.logReadError("watermarks", err)
	l.emit(board.Offsets{At: asked, HighWatermarks: hwm, Err: err})
	if group != "" {
		l.emit(board.Committed{At: committedAsked, Group: group, Offsets: committed, Err: commitErr})
	}
}

// logReadError writes a poll's failure to the lab's log when it differs
// from that poll's previous outcome: the board says a read failed, the log
// says why (an outage repeats the same error twice a second).
func (l *Lab) logReadError(what string, err error) {
	text := ""
	if err != nil {
		text = err.Error()
	}
	l.mu.Lock()
	prev, seen := l.readErrs[what]
	l.readErrs[what] = text
	l.mu.Unlock()
	switch {
	case err != nil && text != prev:
		l.log.Warn("reading the "+what+" failed", "err", err)
	case err == nil && seen && prev != "":
		l.log.Info("reading the " + what + " works again")
	}
}

// pollPartitions reads the topic's placement (leader, replicas, ISR,
// min.insync.replicas) and puts on each partition the sensors whose key
// the producer's partitioner sends there. Stamped with when it was asked.
func (l *Lab) pollPartitions(ctx context.Context) {
	asked := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	lay, err := l.offsets.Layout(pctx, l.cfg.Topic)
	cancel()
	if ctx.Err() != nil {
		return
	}
	l.logReadError("metadata", err)
	if err == nil && lay.MinISRErr != nil {
		l.log.Warn("min.insync.replicas unknown", "topic", l.cfg.Topic, "err", lay.MinISRErr)
	}
	l.emit(partitionsInput(asked, l.cfg.Topic, l.cfg.Sensors, lay, err))
}

// partitionsInput turns a layout read into the board's input, placing
// sensors 1..sensors with kafkacfg.PartitionFor.
func partitionsInput(asked time.Time, topic string, sensors int, lay observe.Layout, err error) board.Partitions {
	in := board.Partitions{At: asked, Topic: topic, MinISR: lay.MinISR, Err: err}
	if err != nil {
		return in
	}
	index := map[int32]int{}
	for _, p := range lay.Partitions {
		index[p.Partition] = len(in.Rows)
		in.Rows = append(in.Rows, board.PartitionMeta{Partition: p.Partition, Leader: p.Leader,
			Replicas: p.Replicas, ISR: p.ISR, Preferred: p.Preferred})
	}
	for i := range sensors {
		id := producer.SensorID(i, sensors)
		if j, ok := index[kafkacfg.PartitionFor(id, len(lay.Partitions))]; ok {
			in.Rows[j].Sensors = append(in.Rows[j].Sensors, id)
		}
	}
	return in
}

func (l *Lab) pollState(ctx context.Context) {
	addr := l.httpAddr(board.Current)
	if addr == "" {
		return
	}
	asked := time.Now()
	st, err := observe.FetchState(ctx, addr)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.SensorsSnapshot{At: asked, Err: err, CaughtUp: st.CaughtUp, Invalid: st.Invalid}
	for _, s := range st.Sensors {
		snap.Sensors = append(snap.Sensors, board.SensorState{SensorID: s.SensorID, Timestamp: s.Timestamp,
			HoursTot: s.Odometry.HoursTot, KmTot: s.Odometry.KmTot, Lat: s.Position.Lat, Lon: s.Position.Lon,
			Partition: s.Partition, Offset: s.Offset})
	}
	l.emit(snap)
}

// pollUsage takes one cut of the usage and hands it to the board as one
// input: consumer-query's answer (per sensor the totals and the furthest
// record they include, from each sensor's summary), consumer-usage's first
// checkpoint of each sensor, and the audit's usage over exactly the records
// that answer covered (audit.ExpectedForCut). The checkpoints are read
// after the answer, so every sensor with records has its first checkpoint
// (it is written before its first record and never changes); the audit
// snapshot is taken last, as far along as it can be, and where it has not
// yet read as far as the records the line says so instead of a drift.
func (l *Lab) pollUsage(ctx context.Context) {
	addr := l.httpAddr(board.Query)
	if addr == "" {
		return
	}
	// A cut that straddles a reset-lab's drop would pair the old records
	// with the new (empty) checkpoints: skip it, the next poll is whole.
	epoch, resetting := l.resetState()
	if resetting {
		return
	}
	asked := time.Now()
	u, err := observe.FetchUsage(ctx, addr)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.UsageSnapshot{At: asked, Err: err}
	if err != nil {
		l.emit(snap)
		return
	}
	covered := u.CoveredBySensor()
	cps, cerr := l.checkpoints(ctx, epoch, covered)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	var cut map[string]audit.Cut
	var causes map[string][]audit.Cause
	var causesErr error
	if cerr != nil {
		snap.ExpectErr = fmt.Errorf("consumer-usage's checkpoints: %w", cerr)
	} else {
		// The audit reads the same topic on its own; give it a moment to
		// reach these records before calling any of them pending.
		truth := l.reader().SnapshotWhen(ctx, 2*time.Second, func(t audit.Truth) bool {
			return !anyAuditBehind(audit.ExpectedForCut(t, covered, cps))
		})
		cut = audit.ExpectedForCut(truth, covered, cps)
		causes, causesErr = l.attribute(ctx, epoch, truth, cut)
	}
	seen := map[string]bool{}
	line := func(id string, c store.Covered) board.UsageTotals {
		ul := usageLine(id, c, cut[id])
		if ul.Expect == board.ExpectReady {
			ul.Causes, ul.CausesErr = l.boardCausesOf(id, causes[id]), causesErr
		}
		return ul
	}
	for _, s := range u.Sensors {
		seen[s.SensorID] = true
		snap.Sensors = append(snap.Sensors, line(s.SensorID, s.Covered()))
	}
	for _, id := range slices.Sorted(maps.Keys(cut)) {
		if !seen[id] { // checkpointed, nothing recorded yet
			snap.Sensors = append(snap.Sensors, line(id, store.Covered{}))
		}
	}
	if e, r := l.resetState(); r || e != epoch {
		return
	}
	l.emit(snap)
}

// attribute names the messages of every sensor's drift over cut, reading
// only the usage records the attribution has not read yet (and all of a
// sensor's again if its causes did not add up).
func (l *Lab) attribute(ctx context.Context, epoch int, truth audit.Truth, cut map[string]audit.Cut) (map[string][]audit.Cause, error) {
	if l.causes == nil || l.causesEpoch != epoch {
		l.causes, l.causesEpoch = audit.NewAttribution(), epoch
	}
	var causes map[string][]audit.Cause
	for range 2 {
		from, upTo := l.causes.Need(truth, cut)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		recs, err := l.db.UsageRecordsFrom(rctx, from, upTo)
		cancel()
		if err != nil {
			l.causes.Reset()
			return nil, fmt.Errorf("usage records: %w", err)
		}
		var bad []string
		causes, bad = l.causes.Apply(truth, cut, from, recs)
		if len(bad) == 0 {
			return causes, nil
		}
	}
	return causes, errors.New("the usage records do not add up to the totals consumer-query answered")
}

type convertedCauses struct {
	from *audit.Cause
	n    int
	to   []board.Cause
}

// boardCausesOf is sensor id's causes in the board's terms, converted once
// per change (a long naive replay has a cause per message).
func (l *Lab) boardCausesOf(id string, cs []audit.Cause) []board.Cause {
	if len(cs) == 0 {
		delete(l.boardCauses, id)
		return nil
	}
	if c, ok := l.boardCauses[id]; ok && c.from == &cs[0] && c.n == len(cs) {
		return c.to
	}
	if l.boardCauses == nil {
		l.boardCauses = map[string]convertedCauses{}
	}
	out := boardCauses(cs)
	l.boardCauses[id] = convertedCauses{from: &cs[0], n: len(cs), to: out}
	return out
}

// boardCauses is a sensor's causes in the board's terms.
func boardCauses(cs []audit.Cause) []board.Cause {
	out := make([]board.Cause, len(cs))
	for i, c := range cs {
		out[i] = board.Cause{Kind: string(c.Kind), Partition: c.Partition, Offset: c.Offset, Records: c.Records,
			Writer: c.Writer, BaseTimestamp: c.BaseTimestamp,
			RecordedHoursCents: c.Recorded.HoursCents, RecordedKmCents: c.Recorded.KmCents,
			ExpectedHoursCents: c.Expected.HoursCents, ExpectedKmCents: c.Expected.KmCents}
	}
	return out
}

// usageLine is one sensor's line of a usage cut.
func usageLine(id string, c store.Covered, cut audit.Cut) board.UsageTotals {
	line := board.UsageTotals{SensorID: id, Hours: c.Hours(), Km: c.Km(), Records: c.Records,
		Partition: c.Through.Partition, Offset: c.Through.Offset}
	switch cut.State {
	case audit.Expected:
		line.Expect = board.ExpectReady
		line.ExpectedHours, line.ExpectedKm = cut.Expected.Hours(), cut.Expected.Km()
	case audit.AuditBehind:
		line.Expect = board.ExpectPending
	}
	return line
}

// pollTruth hands the board the audit's view of each sensor's latest
// message and how far it has read (the usage comparison is in pollUsage).
func (l *Lab) pollTruth(ctx context.Context) {
	asked := time.Now()
	truth := l.reader().Snapshot()
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	snap := board.TruthSnapshot{At: asked, AuditOffset: truth.Read(), AuditThrough: map[int32]int64{}, Moves: keyMoves(truth)}
	for _, p := range truth.Partitions {
		snap.AuditThrough[p.Partition] = p.Next
	}
	if truth.Err != "" {
		snap.Err = errors.New(truth.Err)
	}
	for _, st := range truth.Sensors {
		t := board.Truth{SensorID: st.SensorID, Partitions: st.PartitionIDs, Disordered: st.Disordered, Valid: st.Valid}
		if st.HasLast {
			m := st.Last.Message
			t.Last = &board.SensorState{SensorID: st.SensorID, Timestamp: m.Timestamp, HoursTot: m.Odometry.HoursTot,
				KmTot: m.Odometry.KmTot, Lat: m.Position.Lat, Lon: m.Position.Lon,
				Partition: st.Last.Partition, Offset: st.Last.Offset}
		}
		snap.Sensors = append(snap.Sensors, t)
	}
	l.emit(snap)
}

// Shutdown stops the pollers and the audit, then every child (producer and
// consumers first), and closes Inputs. Nobody needs to read Inputs meanwhile.
func (l *Lab) Shutdown(ctx context.Context) error {
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range l.out {
		}
	}()
	if l.cancel != nil {
		l.cancel()
	}
	l.pollers.Wait()
	// The lab's own clients go before the children: the embedded store
	// waits for open connections before it stops, and a Kafka client whose
	// broker is gone retries until it is closed.
	l.closeClients()
	err := l.sup.Shutdown(ctx)
	if l.pumpDone != nil {
		<-l.pumpDone
	} else {
		close(l.out)
	}
	<-drained
	return err
}

func (l *Lab) closeClients() {
	if l.offsets != nil {
		l.offsets.Close()
	}
	if l.db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.db.Close(ctx)
	}
}

// KillAll SIGKILLs every child at once (signal and panic paths).
func (l *Lab) KillAll() { l.sup.KillAll() }

// OpenLog creates runDir/logs and opens runDir/logs/dashboard.log
// (appending) for a lab's own diagnostics: the terminal is the screen's.
func OpenLog(runDir string) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(filepath.Join(runDir, "logs"), 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(filepath.Join(runDir, "logs", "dashboard.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewTextHandler(redact.Writer(f), nil)), f, nil
}
