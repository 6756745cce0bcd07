package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// StoreConfig configures RunStore.
type StoreConfig struct {
	// DataDir holds the SQLite files (one per database); it is created if
	// missing and locked while the store runs.
	DataDir string
	// Listen is host:port; empty means 127.0.0.1:27017, an empty host means
	// 127.0.0.1, port 0 picks a free port (see the Listening event).
	Listen string
	// Latency, when positive, delays every request a client sends by that
	// much (a relaying proxy on Listen in front of FerretDB): the lab's
	// "slow store" fault. Answers are not delayed.
	Latency time.Duration
}

// RunStore runs FerretDB (SQLite backend) until ctx is cancelled, then stops
// it and waits until SQLite is closed, and returns nil. It emits one
// status.Listening event (Endpoint "mongo") with the bound address.
//
// Shutdown takes up to about 3 s while clients stay connected: FerretDB gives
// open connections that long to finish before it closes them.
func RunStore(ctx context.Context, cfg StoreConfig, em *status.Emitter, log *slog.Logger) error {
	log = orDiscard(log)
	if ctx.Err() != nil {
		return nil
	}
	addr, err := resolveListen(cfg.Listen, "27017")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	// FerretDB parses the dir as part of a URI: these would change its meaning.
	if abs, err := filepath.Abs(cfg.DataDir); cfg.DataDir != "" && err == nil && strings.ContainsAny(abs, "?#%") {
		return fmt.Errorf("store: data dir %q: characters ? # %% are not supported in a SQLite URI", abs)
	}
	dir, unlock, err := prepareDir(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer unlock()
	// FerretDB keeps SQLite in WAL mode; at synchronous=NORMAL a commit is
	// no longer an fsync (6% of the store's CPU under the workshop's labs,
	// and each write's wait): a commit still survives the store's process
	// being killed, which is every fault the lab has; only a power loss
	// could take the last ones back.
	sqliteURL := "file:" + dir + "/?_pragma=synchronous(normal)"

	// With a latency, clients reach FerretDB through a delaying proxy that
	// owns the public address; FerretDB itself listens on a loopback port.
	var proxyLn net.Listener
	if cfg.Latency > 0 {
		if proxyLn, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("store: %w", portHint(err))
		}
		defer proxyLn.Close()
		addr = "127.0.0.1:0"
	}

	// FerretDB does not release SQLite when its listener fails to bind, so a
	// busy fixed port is checked first (port 0 cannot be busy).
	if _, port, _ := net.SplitHostPort(addr); port != "0" {
		probe, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("store: %w", portHint(err))
		}
		_ = probe.Close()
	}

	start := time.Now()
	f, err := newFerretDB(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    slog.New(minLevel{log.Handler(), slog.LevelError}).With("component", "ferretdb"),
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	})
	if err != nil {
		return fmt.Errorf("store: start with data dir %s: %w", dir, err)
	}

	// Run gets its own context so shutdown order is ours: cancel, then wait
	// for Run to return (it closes connections, then SQLite).
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("ferretdb panicked: %v", r)
			}
		}()
		done <- f.Run(runCtx)
	}()

	// The socket is bound in New; MongoDBURI reads it (Run only accepts).
	u, err := url.Parse(f.MongoDBURI())
	if err != nil {
		cancel()
		<-done
		return fmt.Errorf("store: bound address: %w", err)
	}
	bound := u.Host
	proxyDone := make(chan struct{})
	if proxyLn != nil {
		p := &latencyProxy{ln: proxyLn, target: bound, delay: cfg.Latency, log: log}
		go func() { defer close(proxyDone); p.serve(runCtx) }()
		bound = proxyLn.Addr().String()
		log.Warn("store latency: every request is delayed", "latency", cfg.Latency)
	} else {
		close(proxyDone)
	}
	defer func() { cancel(); <-proxyDone }()
	log.Info("store listening", "addr", bound, "data_dir", dir, "startup", time.Since(start).Round(time.Millisecond))
	em.Emit(status.Event{Type: status.Listening, Endpoint: "mongo", Addr: bound})

	select {
	case <-ctx.Done():
	case err := <-done:
		if err == nil {
			err = errors.New("stopped on its own")
		}
		return fmt.Errorf("store: ferretdb: %w", err)
	}
	t := time.Now()
	cancel()
	if err := <-done; err != nil {
		return fmt.Errorf("store: shutdown: %w", err)
	}
	log.Info("store stopped", "took", time.Since(t).Round(time.Millisecond))
	return nil
}

func newFerretDB(c *ferretdb.Config) (f *ferretdb.FerretDB, err error) {
	defer recovered("ferretdb", &err)
	return ferretdb.New(c)
}
