package embedded

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// sink collects the events a role emits; every Emit is one Write of one line.
type sink struct {
	mu  sync.Mutex
	all []status.Event
	ch  chan status.Event
}

func newSink() *sink { return &sink{ch: make(chan status.Event, 16)} }

func (s *sink) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		ev, err := status.Parse(line)
		if err != nil {
			continue
		}
		s.mu.Lock()
		s.all = append(s.all, ev)
		s.mu.Unlock()
		select {
		case s.ch <- ev:
		default:
		}
	}
	return len(p), nil
}

func (s *sink) events() []status.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]status.Event(nil), s.all...)
}

// tlogWriter sends role logs to the test log. Roles always return before
// their test ends (stop is called or registered as a cleanup).
type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type roleFunc func(ctx context.Context, em *status.Emitter, log *slog.Logger) error

// running is a role started in this process.
type running struct {
	t       testing.TB
	addr    string
	cancel  context.CancelFunc
	done    chan error
	sink    *sink
	stopped bool
}

// startRole runs fn and waits for its Listening event, or fails the test if
// fn returns or nothing happens within the deadline.
func startRole(t testing.TB, role, endpoint string, fn roleFunc) *running {
	t.Helper()
	r := tryStartRole(t, role, fn)
	select {
	case ev := <-r.sink.ch:
		if ev.Type != status.Listening || ev.Endpoint != endpoint {
			t.Fatalf("first event = %+v, want listening %s", ev, endpoint)
		}
		r.addr = ev.Addr
	case err := <-r.done:
		r.stopped = true
		t.Fatalf("%s returned before listening: %v", role, err)
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no listening event within 20s", role)
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func tryStartRole(t testing.TB, role string, fn roleFunc) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, cancel: cancel, done: make(chan error, 1), sink: newSink()}
	em := status.NewTo(role, r.sink)
	log := testLogger(t).With("role", role)
	go func() { r.done <- fn(ctx, em, log) }()
	return r
}

// stop cancels the role and waits for it; it returns how long that took.
func (r *running) stop() time.Duration {
	r.t.Helper()
	if r.stopped {
		return 0
	}
	r.stopped = true
	start := time.Now()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("role returned %v after cancel, want nil", err)
		}
	case <-time.After(20 * time.Second):
		r.t.Fatalf("role did not return within 20s of cancel")
	}
	took := time.Since(start)
	n := 0
	for _, ev := range r.sink.events() {
		if ev.Type == status.Listening {
			n++
		}
	}
	if n != 1 {
		r.t.Errorf("%d listening events, want exactly 1", n)
	}
	return took
}

// checkLoopbackAddr checks a Listening address is 127.0.0.1 with a real port.
func checkLoopbackAddr(t testing.TB, addr string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" || port == "" {
		t.Fatalf("listening addr %q, want 127.0.0.1 with a real port", addr)
	}
}
