package usage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
)

// eventSink collects the status events written to it (one line per Write).
type eventSink struct {
	mu  sync.Mutex
	all []status.Event
}

func (s *eventSink) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		if ev, err := status.Parse(line); err == nil {
			s.mu.Lock()
			s.all = append(s.all, ev)
			s.mu.Unlock()
		}
	}
	return len(p), nil
}

func (s *eventSink) events() []status.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]status.Event(nil), s.all...)
}

// first returns the first event of type typ, if any.
func (s *eventSink) first(typ status.Type) (status.Event, bool) {
	for _, ev := range s.events() {
		if ev.Type == typ {
			return ev, true
		}
	}
	return status.Event{}, false
}

// role is an embedded broker or store running in this test process.
type role struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func (r *role) stop() {
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
	}
}

type roleFunc func(ctx context.Context, em *status.Emitter, log *slog.Logger) error

// startRole runs fn until its Listening event, or fails after a deadline.
func startRole(name string, fn roleFunc) (*role, error) {
	ctx, cancel := context.WithCancel(context.Background())
	sink := &eventSink{}
	r := &role{cancel: cancel, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { r.done <- fn(ctx, status.NewTo(name, sink), log) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ev, ok := sink.first(status.Listening); ok {
			r.addr = ev.Addr
			return r, nil
		}
		select {
		case err := <-r.done:
			cancel()
			return nil, fmt.Errorf("%s returned before listening: %v", name, err)
		case <-time.After(20 * time.Millisecond): // poll interval
		}
	}
	cancel()
	return nil, fmt.Errorf("%s: no listening event within 30s", name)
}

var (
	testDir    string
	storeOnce  sync.Once
	storeRole  *role
	storeErr   error
	brokerOnce sync.Once
	brokerRole *role
	brokerErr  error
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// A child process of a crash test: be the consumer, not the tests.
		os.Exit(Main(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "krl-usage-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	if brokerRole != nil {
		brokerRole.stop()
	}
	if storeRole != nil {
		storeRole.stop()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// storeAddr starts the package's embedded FerretDB once.
func storeAddr(t testing.TB) string {
	t.Helper()
	storeOnce.Do(func() {
		storeRole, storeErr = startRole("store", func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
			return embedded.RunStore(ctx, embedded.StoreConfig{DataDir: testDir + "/store", Listen: "127.0.0.1:0"}, em, log)
		})
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return storeRole.addr
}

// brokerAddr starts the package's embedded kfake broker once.
func brokerAddr(t testing.TB) string {
	t.Helper()
	brokerOnce.Do(func() {
		brokerRole, brokerErr = startRole("broker", func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
			return embedded.RunBroker(ctx, embedded.BrokerConfig{DataDir: testDir + "/broker", Listen: "127.0.0.1:0",
				Topic: "sensor-data", Partitions: 3}, em, log)
		})
	})
	if brokerErr != nil {
		t.Fatal(brokerErr)
	}
	return brokerRole.addr
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freshDB returns a URI of a database no other test uses, and a connected store.
func freshDB(t testing.TB) (string, *store.Store) {
	t.Helper()
	uri := fmt.Sprintf("mongodb://%s/t_%s", storeAddr(t), randHex(6))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	return uri, st
}
