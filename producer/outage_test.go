package producer

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// brokerAt runs the embedded broker on addr with dataDir until the returned
// stop is called (a restart reuses both, as the dashboard's `r` does), and
// returns the address it listens on.
func brokerAt(t *testing.T, addr, dataDir string) (listening string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sink := &events{}
	done := make(chan error, 1)
	go func() {
		done <- embedded.RunBroker(ctx, embedded.BrokerConfig{DataDir: dataDir, Listen: addr, Topic: testTopic, Partitions: 3},
			status.NewTo("broker", sink), nil)
	}()
	ev := sink.await(t, "broker listening", func(e status.Event) bool { return e.Type == status.Listening }, 20*time.Second)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("broker: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return ev.Addr, stop
}

// lockedBuffer is a log destination the test reads while the producer writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInjectionAndTelemetryOutlastABrokerOutage: an injection asked for
// while the broker is away for longer than 30 s (an Apache Kafka restart
// after SIGKILL can take that long on a 2-core machine) lands once the
// broker is back, and so does the telemetry buffered meanwhile: nothing
// fails.
func TestInjectionAndTelemetryOutlastABrokerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a broker outage of 35 s")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dataDir := t.TempDir()
	_, stopBroker := brokerAt(t, addr, dataDir)

	logs := &lockedBuffer{}
	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Brokers: addr, Topic: testTopic, Sensors: 3, Interval: 200 * time.Millisecond, HTTP: "127.0.0.1:0"},
			status.NewTo(Role, sink), slog.New(slog.NewTextHandler(logs, nil)))
	}()
	ended := false
	defer func() {
		cancel()
		if !ended {
			<-done
		}
	}()
	http0 := sink.await(t, "http listening", func(e status.Event) bool { return e.Type == status.Listening && e.Endpoint == "http" }, 20*time.Second)
	sink.await(t, "first deliveries", func(e status.Event) bool { return e.Type == status.Progress && e.Produced >= 9 }, 20*time.Second)

	stopBroker()
	sink.await(t, "producer sees the broker away", func(e status.Event) bool { return e.Type == status.Retrying && e.Endpoint == "kafka" }, 20*time.Second)
	type answer struct {
		code int
		res  InjectResult
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post("http://"+http0.Addr+"/inject-bad?n=9", "", nil)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var a answer
		a.code = resp.StatusCode
		a.err = json.NewDecoder(resp.Body).Decode(&a.res)
		answered <- a
	}()
	time.Sleep(35 * time.Second) // the outage itself, longer than the old 30 s message timeout
	select {
	case a := <-answered:
		t.Fatalf("the injection answered while the broker was away: %d %+v %v", a.code, a.res, a.err)
	default:
	}
	brokerAt(t, addr, dataDir)

	var a answer
	select {
	case a = <-answered:
	case <-time.After(60 * time.Second):
		t.Fatal("no answer to the injection within 60 s of the broker's return")
	}
	if a.err != nil || a.code != http.StatusOK || a.res.Delivered != 9 {
		t.Fatalf("injection: %d %+v %v", a.code, a.res, a.err)
	}
	cancel()
	ended = true
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(logs.String(), "delivery failed") {
		t.Errorf("telemetry deliveries failed during the outage:\n%s", logs.String())
	}
	invalid, valid := 0, 0
	last := map[string]*telemetry.Message{}
	for _, m := range readAll(t, addr) {
		v, err := telemetry.Check(m.Key, m.Value, last[string(m.Key)])
		if err != nil {
			invalid++
			continue
		}
		valid++
		if prev := last[v.SensorID]; prev != nil && v.Timestamp <= prev.Timestamp {
			t.Errorf("%s: timestamp %d after %d: out of order or duplicated", v.SensorID, v.Timestamp, prev.Timestamp)
		}
		last[v.SensorID] = &v
	}
	if invalid != 9 {
		t.Errorf("the topic holds %d invalid records, want the 9 injected", invalid)
	}
	t.Logf("%d valid records and %d injected after a 35 s outage", valid, invalid)
}
