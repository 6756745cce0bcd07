package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad environment: the dashboard and the roles started where something is
// missing or taken. Each case checks the exit code, that the message says
// what to do, that it ends in bounded time, and that no process is left
// (every process of a dashboard run carries the run's tag, see taggedProcs).
// They mostly wait for a timeout, and each has a broker and store of its own
// or none: they run in parallel. The dashboard's --connect-timeout is
// shortened to badEnvTimeout; the message names the timeout in force.

const badEnvTimeout = "3s"

// headlessFails runs the headless dashboard with extra flags and returns
// its stderr once it exited with code 1 within limit.
func headlessFails(t *testing.T, limit time.Duration, extra ...string) string {
	t.Helper()
	d := newDashboard(t)
	start := time.Now()
	c := d.startHeadless("", extra...)
	code, ok := c.WaitExit(limit)
	if !ok {
		t.Fatalf("the dashboard still runs after %s (it must not hang)", limit)
	}
	out := c.StderrTail(200)
	if code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", code, out)
	}
	if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
		t.Fatalf("a panic:\n%s", out)
	}
	t.Logf("exited 1 in %s", time.Since(start).Round(time.Millisecond))
	awaitNoProcesses(t, d.tag, childPIDsFromLogs(t, d.runDir), 15*time.Second)
	return out
}

func wantAll(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Errorf("the message lacks %q:\n%s", p, out)
		}
	}
}

func TestBadEnvUnreachableBroker(t *testing.T) {
	t.Parallel()
	out := headlessFails(t, 45*time.Second, "--brokers", "127.0.0.1:1", "--connect-timeout", badEnvTimeout)
	wantAll(t, out, "no answer from Kafka at 127.0.0.1:1 within "+badEnvTimeout, "check --brokers / KAFKA_BROKER")
}

func TestBadEnvUnreachableMongo(t *testing.T) {
	t.Parallel()
	out := headlessFails(t, 60*time.Second, "--mongo", "mongodb://127.0.0.1:1/krl", "--connect-timeout", badEnvTimeout)
	wantAll(t, out, "MongoDB at mongodb://127.0.0.1:1/krl did not answer", "check --mongo / MONGO_URI")
}

func TestBadEnvDataDirNotWritable(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Start(t, Binary(t), "--headless", "--data-dir", filepath.Join(file, "run"))
	code, ok := c.WaitExit(10 * time.Second)
	if !ok || code != 1 {
		t.Fatalf("exited=%v code=%d, want 1 within 10s", ok, code)
	}
	wantAll(t, c.StderrTail(20), "is not a writable directory", "choose another with --data-dir")
}

// TestBadEnvPortInUse: the embedded broker and store, and the consumers'
// HTTP servers, asked for a busy port say so and how to fix it, and exit 1
// at once.
func TestBadEnvPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, role := range []string{"broker", "store"} {
		t.Run(role, func(t *testing.T) {
			c := Start(t, Binary(t), role, "--listen", ln.Addr().String(), "--data-dir", t.TempDir())
			code, ok := c.WaitExit(20 * time.Second)
			if !ok || code != 1 {
				t.Fatalf("exited=%v code=%d, want 1 within 20s; stderr:\n%s", ok, code, c.StderrTail(20))
			}
			wantAll(t, c.StderrTail(20), "address already in use", "choose another address with --listen")
		})
	}
	// A consumer's HTTP address: it fails before it needs its broker or store.
	for _, name := range []string{"current", "usage", "query"} {
		t.Run("consumer_"+name, func(t *testing.T) {
			c := Start(t, Binary(t), "consumer", name, "--http", ln.Addr().String(),
				"--brokers", "127.0.0.1:1", "--mongo", "mongodb://127.0.0.1:1/krl", "--topic", "sensor-data")
			code, ok := c.WaitExit(20 * time.Second)
			if !ok || code != 1 {
				t.Fatalf("exited=%v code=%d, want 1 within 20s; stderr:\n%s", ok, code, c.StderrTail(20))
			}
			wantAll(t, c.StderrTail(20), "address already in use", "choose another address with --http")
		})
	}
}

// TestBadEnvTUI: the terminal dashboard with an unreachable broker shows
// every lesson process failed with the cause (never starting forever); r
// retries instead of answering "unknown process"; a terminal below the
// minimum says what to do; q then ends it with 0 and no process left.
func TestBadEnvTUI(t *testing.T) {
	t.Parallel()
	d := newDashboard(t)
	tm := startTmuxDashboard(t, d, "--brokers", "127.0.0.1:1", "--connect-timeout", badEnvTimeout)
	tm.await("every lesson process failed with the cause", 45*time.Second, func(s string) error {
		rows := procRows(s)
		for _, name := range []string{"producer", "consumer-current", "consumer-usage", "consumer-query"} {
			if !strings.Contains(rows[name].State, "failed: Kafka down") {
				return fmt.Errorf("%s is %q", name, rows[name].State)
			}
		}
		if !strings.Contains(s, "could not start producer") || !strings.Contains(s, "Kafka at") {
			return fmt.Errorf("no cause in the events")
		}
		return nil
	})
	tm.key("1")
	tm.key("r")
	tm.await("r retries the launch", 10*time.Second, func(s string) error {
		if strings.Contains(s, "unknown process") {
			t.Fatalf("r answered unknown process:\n%s", s)
		}
		if !strings.Contains(s, "producer  start requested") {
			return fmt.Errorf("no start requested yet")
		}
		return nil
	})
	tm.await("the retry fails again, with the cause", 30*time.Second, func(s string) error {
		if !strings.Contains(s, "producer  start failed: no answer from Kafka at") {
			return fmt.Errorf("the retry's failure is not shown")
		}
		if st := procRows(s)["producer"].State; !strings.Contains(st, "failed: Kafka down") {
			return fmt.Errorf("producer is %q", st)
		}
		return nil
	})
	if strings.Contains(tm.capture(), "unknown process") {
		t.Fatalf("r answered unknown process")
	}

	tm.tmux("resize-window", "-t", "krl", "-x", "60", "-y", "20")
	tm.await("too small, with what to do", 10*time.Second, func(s string) error {
		if !strings.Contains(s, "too small") || !strings.Contains(s, "Enlarge the window") {
			return fmt.Errorf("no message")
		}
		return nil
	})
	dash := tm.dashboardPID()
	pids := childPIDsFromLogs(t, d.runDir)
	tm.key("q")
	if code := tm.awaitExit(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after q, want 0", code)
	}
	awaitNoProcesses(t, d.tag, append(pids, dash), 15*time.Second)
}
