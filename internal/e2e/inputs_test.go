package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lab"
)

// TestBadRunInputs: a topic name Kafka refuses and a report path that
// cannot be written are usage errors at once (one error line, exit 2),
// before any process starts, not after a wait or a whole run.
func TestBadRunInputs(t *testing.T) {
	bin := Binary(t)
	cases := map[string][]string{
		"empty topic":     {"--topic", ""},
		"path topic":      {"--topic", "../../x y"},
		"dot topic":       {"--topic", ".."},
		"long topic":      {"--topic", strings.Repeat("t", 250)},
		"report dir":      {"--report", "/nonexistent/dir/r.json"},
		"report is a dir": {"--report", t.TempDir()},
	}
	for name, extra := range cases {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			runDir := filepath.Join(t.TempDir(), "run")
			args := append([]string{"--headless", "--data-dir", runDir, "--brokers=", "--mongo="}, extra...)
			began := time.Now()
			c := Start(t, bin, args...)
			code, ok := c.WaitExit(5 * time.Second)
			if !ok {
				t.Fatalf("%q still running after 5s; stderr:\n%s", extra, c.StderrTail(20))
			}
			out := c.StderrTail(50)
			if code != 2 {
				t.Fatalf("%q exited %d, want 2; stderr:\n%s", extra, code, out)
			}
			if n := strings.Count(out, "error:"); n != 1 {
				t.Fatalf("%q printed %d error lines, want 1:\n%s", extra, n, out)
			}
			if strings.Contains(out, "logs of this run") {
				t.Fatalf("%q began a run before refusing it:\n%s", extra, out)
			}
			t.Logf("%s: exit 2 in %s: %s", name, time.Since(began).Round(time.Millisecond), strings.SplitN(out, "\n", 2)[0])
		})
	}
}

// TestLaunchEndsWhenBrokerExits: the lab's wait for the embedded broker to
// listen ends as soon as the broker exits (here at once: its topic is
// empty), with the broker's own words, not after the 60 s bound.
func TestLaunchEndsWhenBrokerExits(t *testing.T) {
	l, err := lab.New(lab.Config{Exe: Binary(t), RunDir: t.TempDir(), Topic: "", Sensors: 1, Interval: time.Second,
		UsageMode: "guarded", UsageReset: "latest"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range l.Inputs() {
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = l.Shutdown(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	err = l.Launch(ctx)
	took := time.Since(began)
	if err == nil {
		t.Fatal("Launch succeeded with an empty topic")
	}
	t.Logf("Launch failed in %s: %v", took.Round(time.Millisecond), err)
	if took > 10*time.Second {
		t.Fatalf("Launch took %s to see the broker exit", took)
	}
	for _, want := range []string{"broker exited before it listened", "topic is empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q", want)
		}
	}
}

// TestSignalWhileStarting: SIGTERM while the headless dashboard waits for
// a broker that does not answer ends the run at once (exit 0, no process
// left), not when the wait gives up.
func TestSignalWhileStarting(t *testing.T) {
	t.Parallel()
	d := newDashboard(t)
	c := d.startHeadless("", "--brokers", "127.0.0.1:1", "--connect-timeout", "60s")
	storeLog := filepath.Join(d.runDir, "logs", "store.log")
	AwaitCondition(t, "the store listening, the broker awaited", 30*time.Second, 20*time.Millisecond, func() error {
		if b, _ := os.ReadFile(storeLog); !strings.Contains(string(b), "store listening") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	began := time.Now()
	c.Signal(syscall.SIGTERM)
	code, ok := c.WaitExit(10 * time.Second)
	if !ok {
		t.Fatalf("still running 10s after SIGTERM; stderr:\n%s", c.StderrTail(20))
	}
	t.Logf("exit %d %s after SIGTERM", code, time.Since(began).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, c.StderrTail(20))
	}
	awaitNoProcesses(t, d.tag, childPIDsFromLogs(t, d.runDir), 15*time.Second)
}
