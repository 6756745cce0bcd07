// Package query is consumer-query, the seed's strategy 3: no Kafka consumer
// and no state, only answers computed from the store on each request. When
// it crashes it just starts again; its one dependency is the store.
package query

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/kafka-recovery-lab/krl/internal/api"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// Role is the name consumer-query reports in its status events.
const Role = "consumer-query"

// Config configures Run.
type Config struct {
	Mongo string
	// HTTP is the listen address of /usage and /healthz ("127.0.0.1:0" picks a port).
	HTTP string
	// StoreTimeout bounds the store's answer to one GET /usage (default
	// 10 s): past it the answer is 503 "store_slow".
	StoreTimeout time.Duration
	// Source is where the totals come from: SourceSummaries (the built-in
	// consumer-usage's checkpoints) or SourceRecords (the records
	// themselves, summed here: a consumer-usage of the user's keeps no
	// summaries).
	Source string
}

// The sources of GET /usage's totals (--source).
const (
	SourceSummaries = "summaries"
	SourceRecords   = "records"
)

const (
	pingEvery = time.Second
	// pingTimeout is longer than the driver's server selection (3 s,
	// store.Connect): an unreachable store fails the ping with the cause
	// rather than a deadline, and a slow one (each request late) still
	// answers it, so /usage can tell store_unreachable from store_slow.
	pingTimeout      = 5 * time.Second
	queryTimeout     = 10 * time.Second
	retryReportEvery = 5 * time.Second
)

// Main runs the consumer-query role: flags, signals, exit code.
func Main(args []string) int {
	fs := flag.NewFlagSet("consumer query", flag.ContinueOnError)
	var conn cli.Conn
	conn.Register(fs)
	httpAddr := fs.String("http", "127.0.0.1:0", "listen address of GET /usage and /healthz")
	storeTimeout := fs.Duration("store-timeout", queryTimeout, "GET /usage answers 503 (store_slow) when the store has not answered within this")
	source := fs.String("source", SourceSummaries, "where the totals come from: summaries (consumer-usage's checkpoints) or records (every usage record, summed here)")
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if _, err := mongoHost(conn.Mongo); err != nil {
		return cli.Exit(os.Stderr, cli.Usagef("--mongo: %v", err))
	}
	if _, _, err := net.SplitHostPort(*httpAddr); err != nil {
		return cli.Exit(os.Stderr, cli.Usagef("--http %q: %v", *httpAddr, err))
	}
	if *source != SourceSummaries && *source != SourceRecords {
		return cli.Exit(os.Stderr, cli.Usagef("--source %q: want %s or %s", *source, SourceSummaries, SourceRecords))
	}
	if *storeTimeout < 10*time.Millisecond || *storeTimeout > 5*time.Minute {
		return cli.Exit(os.Stderr, cli.Usagef("--store-timeout must be between 10ms and 5m, got %s", *storeTimeout))
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	em := status.New(Role)
	return cli.ExitReporting(em, os.Stderr, Run(ctx, Config{Mongo: conn.Mongo, HTTP: *httpAddr, StoreTimeout: *storeTimeout, Source: *source}, em, cli.Logger(Role)))
}

// mongoHost is the URI's host list without credentials, for events and logs.
func mongoHost(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "mongodb" && u.Scheme != "mongodb+srv" {
		return "", fmt.Errorf("%q is not a mongodb:// URI", uri)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q names no host", uri)
	}
	return u.Host, nil
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, err := mongoHost(cfg.Mongo)
	if err != nil {
		return err
	}
	em.Emit(status.Event{Type: status.Started, PID: os.Getpid()})
	st, err := store.Connect(ctx, cfg.Mongo)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = st.Close(cctx)
	}()

	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = queryTimeout
	}
	s := &server{st: st, em: em, log: log, host: host, timeout: cfg.StoreTimeout, fromRecords: cfg.Source == SourceRecords}
	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		return fmt.Errorf("http: %w", cli.ListenHint("--http", err))
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("http listening", "addr", ln.Addr().String(), "store", host)
	em.Emit(status.Event{Type: status.Listening, Endpoint: "http", Addr: ln.Addr().String()})

	s.watch(ctx) // returns when ctx ends

	em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	select {
	case err := <-served:
		if err != http.ErrServerClosed {
			return fmt.Errorf("http: %w", err)
		}
	default:
	}
	return nil
}

type server struct {
	st      *store.Store
	em      *status.Emitter
	log     *slog.Logger
	host    string
	timeout time.Duration
	// fromRecords: totals are summed from the records (Config.Source).
	fromRecords bool

	mu        sync.Mutex
	known     bool // whether reachability was established at least once
	reachable bool
	lastErr   string
	lastRetry time.Time
}

// watch pings the store every second so that an outage and the recovery
// are reported even when nobody asks for /usage.
func (s *server) watch(ctx context.Context) {
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err := s.st.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		s.observe(err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// observe records the outcome of a store call and reports changes.
func (s *server) observe(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		if !s.known || !s.reachable {
			s.log.Info("store reachable", "store", s.host)
			s.em.Emit(status.Event{Type: status.Connected, Endpoint: "mongo", Addr: s.host})
		}
		s.known, s.reachable, s.lastErr = true, true, ""
		return
	}
	s.lastErr = err.Error()
	if !s.known || s.reachable || time.Since(s.lastRetry) >= retryReportEvery {
		s.lastRetry = time.Now()
		s.log.Warn("store unreachable; retrying", "store", s.host, "err", err)
		s.em.Emit(status.Event{Type: status.Retrying, Endpoint: "mongo", Addr: s.host, Error: err.Error()})
	}
	s.known, s.reachable = true, false
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /usage", s.usage)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		reachable, lastErr := s.reachable, s.lastErr
		s.mu.Unlock()
		if !reachable {
			if lastErr == "" {
				lastErr = "store not reached yet"
			}
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": lastErr})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

func (s *server) usage(w http.ResponseWriter, r *http.Request) {
	// A store the watcher finds unreachable is not asked: the answer
	// comes at once instead of after the driver's own timeout.
	s.mu.Lock()
	down, lastErr := s.known && !s.reachable, s.lastErr
	s.mu.Unlock()
	if down {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{
			"error": "store unavailable: " + lastErr, "reason": ReasonStoreUnreachable})
		return
	}
	limit := s.timeout
	if limit <= 0 {
		limit = queryTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	// Each sensor's totals and the furthest record they include come from
	// its summary (one document), so each line describes one cut of its
	// stream.
	cov, err := s.coverage(ctx)
	if r.Context().Err() != nil {
		return // the client went away
	}
	if err != nil {
		reason, msg := unavailable(err, ctx.Err() != nil, limit)
		if reason == ReasonStoreUnreachable {
			s.observe(err)
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": msg, "reason": reason})
		return
	}
	s.observe(nil)
	writeJSON(w, http.StatusOK, api.UsageFromCoverage(cov))
}

// coverage is each sensor's totals with the records they stand for.
func (s *server) coverage(ctx context.Context) (map[string]store.Covered, error) {
	if !s.fromRecords {
		return s.st.UsageCoverage(ctx)
	}
	sc, err := s.st.ScanRecords(ctx)
	if err != nil {
		return nil, err
	}
	return sc.Coverage(), nil
}

// The reasons of a 503 from GET /usage (field "reason").
const (
	// ReasonStoreUnreachable: the store refused or dropped the query.
	ReasonStoreUnreachable = "store_unreachable"
	// ReasonStoreSlow: the store had not answered within --store-timeout.
	ReasonStoreSlow = "store_slow"
)

// unavailable classifies a failed usage query: timedOut says the
// request's own deadline passed.
func unavailable(err error, timedOut bool, limit time.Duration) (reason, msg string) {
	if timedOut {
		return ReasonStoreSlow, fmt.Sprintf("store too slow: no answer within %s (%v)", limit, err)
	}
	return ReasonStoreUnreachable, "store unavailable: " + err.Error()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
