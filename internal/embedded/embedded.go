// Package embedded runs the default, dependency-free stack of the lab: a
// Kafka-protocol broker (franz-go's kfake) and a MongoDB-wire store
// (FerretDB v1 on SQLite). Each role runs as its own child process of the
// dashboard; RunBroker and RunStore are the bodies of those processes.
//
// Both roles persist to a data directory, take an exclusive lock on it (two
// processes writing the same kfake segments or FerretDB metadata would corrupt
// them), emit exactly one status.Listening event with the real bound address
// once clients can connect, and shut down cleanly when their context ends.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// lockName is the lock file each role keeps in its data directory.
const lockName = "krl.lock"

// resolveListen turns a Listen setting into host:port. An empty setting means
// loopback on defPort, an empty host means loopback: nothing is reachable from
// other machines unless the caller names a host.
func resolveListen(listen, defPort string) (string, error) {
	if listen == "" {
		return net.JoinHostPort("127.0.0.1", defPort), nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", listen, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("listen address %q: bad port", listen)
	}
	return net.JoinHostPort(host, port), nil
}

// prepareDir makes dir absolute, creates it and locks it. The returned
// function releases the lock.
func prepareDir(dir string) (string, func(), error) {
	if dir == "" {
		return "", nil, errors.New("data dir is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("data dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", nil, fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockDir(abs)
	if err != nil {
		return "", nil, err
	}
	return abs, unlock, nil
}

// orDiscard keeps the roles usable with a nil logger.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return log
}

// recovered turns a panic inside a third-party constructor (corrupt data on
// disk is the likely cause) into an error: a role must fail, not crash.
func recovered(what string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s panicked: %v", what, r)
	}
}

// minLevel wraps a handler and drops records below a level. FerretDB logs
// every failed client command at WARN, which is noise for this lab.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}

// portHint adds what to do to a bind error on a busy port.
func portHint(err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w (another process uses this port: stop it, or choose another address with --listen)", err)
	}
	return err
}
