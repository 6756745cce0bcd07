// Package current is consumer-current, the seed's strategy 1 (full replay):
// every start uses a fresh random group id with auto.offset.reset=earliest
// and never commits, so it rebuilds its in-memory state (the last message
// of each sensor) from the whole topic. Overwriting by key is idempotent,
// so replaying is always correct; the price is the replay time.
//
// The seed's two remedies are its other rebuild strategies (--rebuild):
// snapshot (the state and the offsets it covers, in a file written every
// few seconds and at a graceful stop) and changelog (each sensor's latest
// state in a compacted topic of its own). Either way a start reads only
// what follows the saved offsets, still in a fresh group, still without
// commits, and anything it cannot trust sends it back to the replay
// (rebuild.go).
package current

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/health"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Role is the name consumer-current reports in its status events.
const Role = "consumer-current"

// Config configures Run.
type Config struct {
	Brokers string
	Topic   string
	// HTTP is the listen address of /state and /healthz ("127.0.0.1:0" picks a port).
	HTTP string
	// GroupID is the consumer group; empty means a fresh random one.
	GroupID string
	// StuckAfter: GET /healthz answers 503 once the lag has been > 0 this
	// long without progress (0 = health.DefaultStuckAfter).
	StuckAfter time.Duration
	// Rebuild is how this start rebuilds its state and what the process
	// keeps up for the next one ("" = replay); POST /rebuild changes the
	// latter while it runs.
	Rebuild lesson.Rebuild
	// Snapshot is the snapshot strategy's file ("" = none).
	Snapshot string
	// SnapshotEvery and ChangelogEvery: how often the strategy in force is
	// saved (0 = DefaultSnapshotEvery, DefaultChangelogEvery).
	SnapshotEvery, ChangelogEvery time.Duration
}

// Main runs the consumer-current role: flags, signals, exit code.
func Main(args []string) int {
	withoutCgoCheck()
	fs := flag.NewFlagSet("consumer current", flag.ContinueOnError)
	var conn cli.Conn
	conn.Register(fs)
	httpAddr := fs.String("http", "127.0.0.1:0", "listen address of GET /state and /healthz")
	stuckAfter := fs.Duration("stuck-after", health.DefaultStuckAfter, "GET /healthz answers 503 after this long with lag > 0 and no progress")
	rebuild := fs.String("rebuild", string(lesson.Replay), "how a start rebuilds the state: replay (the whole topic), snapshot (--snapshot FILE, then what follows) or changelog (the compacted topic TOPIC"+kafkacfg.ChangelogSuffix+", then what follows)")
	snapshotFile := fs.String("snapshot", "", "the snapshot strategy's `FILE` (written atomically)")
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if conn.Brokers == "" || conn.Topic == "" {
		return cli.Exit(os.Stderr, cli.Usagef("--brokers and --topic must not be empty"))
	}
	if *stuckAfter <= 0 {
		return cli.Exit(os.Stderr, cli.Usagef("--stuck-after %v: want more than 0", *stuckAfter))
	}
	if _, _, err := net.SplitHostPort(*httpAddr); err != nil {
		return cli.Exit(os.Stderr, cli.Usagef("--http %q: %v", *httpAddr, err))
	}
	strategy, err := lesson.ParseRebuild(*rebuild)
	if err != nil {
		return cli.Exit(os.Stderr, cli.Usagef("--rebuild: %v", err))
	}
	if strategy == lesson.Snapshot && *snapshotFile == "" {
		return cli.Exit(os.Stderr, cli.Usagef("--rebuild snapshot needs --snapshot FILE"))
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	cfg := Config{Brokers: conn.Brokers, Topic: conn.Topic, HTTP: *httpAddr, StuckAfter: *stuckAfter,
		Rebuild: strategy, Snapshot: *snapshotFile}
	em := status.New(Role)
	log := cli.Logger(Role)
	cli.ExitWithin(ctx, cli.StopBound, em, log)
	return cli.ExitReporting(em, os.Stderr, Run(ctx, cfg, em, log))
}

// NewGroupID is the seed's f"demo-current-{uuid4().hex[:8]}".
func NewGroupID() string {
	return kafkacfg.FreshGroup(kafkacfg.CurrentGroupPrefix)
}

// Run consumes until ctx ends, serving the state over HTTP.
func Run(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.GroupID == "" {
		cfg.GroupID = NewGroupID()
	}
	if cfg.Rebuild == "" {
		cfg.Rebuild = lesson.Replay
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.ChangelogEvery <= 0 {
		cfg.ChangelogEvery = DefaultChangelogEvery
	}
	if cfg.Snapshot != "" {
		removeStaleTemps(cfg.Snapshot)
	}
	start := time.Now()
	em.Emit(status.Event{Type: status.Started, PID: os.Getpid(), GroupID: cfg.GroupID, Reset: "earliest"})
	log.Info("consumer-current starting", "brokers", cfg.Brokers, "topic", cfg.Topic, "group", cfg.GroupID)

	st := newState(cfg.GroupID)
	st.health = health.NewTracker(cfg.StuckAfter)
	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		return fmt.Errorf("http: %w", cli.ListenHint("--http", err))
	}
	prep := newPreparer(cfg, st, em, log)
	mux := st.handler()
	prep.routes(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("http listening", "addr", ln.Addr().String())
	em.Emit(status.Event{Type: status.Listening, Endpoint: "http", Addr: ln.Addr().String()})

	em.Emit(status.Event{Type: status.Prepares, Strategy: string(cfg.Rebuild)})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepared := make(chan struct{})
	go func() { defer close(prepared); prep.run(runCtx) }()
	c := &consumer{cfg: cfg, em: em, log: log, st: st, start: start, prep: prep}
	errc := make(chan error, 1)
	go func() { errc <- c.run(runCtx) }()
	select {
	case err = <-errc:
	case serr := <-served:
		cancel()
		<-errc
		err = fmt.Errorf("http server stopped: %w", serr)
	}
	cancel()
	<-prepared
	if err == nil {
		// A graceful stop: every record polled is applied, so the state
		// saved now is the whole of what was read.
		prep.final()
	}
	return err
}
