package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/e2e"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// TestSecondRunOnDataDir: a second run on a --data-dir that holds an
// earlier one is refused at once, naming what carried over, unless
// --resume asks to continue it; then the timeline says so first, and
// consumer-usage resumes at the earlier run's commits.
func TestSecondRunOnDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole stack")
	}
	bin := e2e.Binary(t)
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	script := filepath.Join(dir, "caught-up.krl")
	if err := os.WriteFile(script, []byte("wait-caught-up 60s\nwait 2s\nwait-caught-up 60s\nquit\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	first, stderr, code := runOnDir(t, bin, runDir, filepath.Join(dir, "first.json"), "--script", script)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, e2e.Tail(stderr, 30))
	}
	committed := usageCommits(first)
	t.Logf("first run: consumer-usage committed Σ%d", committed)
	if committed == 0 {
		t.Fatalf("first run left no commits of %s\n%s", kafkacfg.UsageGroupID, e2e.Tail(stderr, 30))
	}

	start := time.Now()
	_, stderr, code = runOnDir(t, bin, runDir, "", "--script", script)
	t.Logf("second run without --resume: exit %d after %.1f s: %s", code, time.Since(start).Seconds(), strings.TrimSpace(stderr))
	if code != 2 {
		t.Fatalf("second run on the same --data-dir: exit %d, want 2 (refused)\n%s", code, e2e.Tail(stderr, 30))
	}
	for _, want := range []string{"holds an earlier run", "broker/", "store/", "--resume"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q: %s", want, stderr)
		}
	}

	third, stderr, code := runOnDir(t, bin, runDir, filepath.Join(dir, "third.json"), "--resume", "--script", script)
	if code != 0 {
		t.Fatalf("run with --resume: exit %d\n%s", code, e2e.Tail(stderr, 30))
	}
	if !strings.Contains(stderr, "continues the earlier run in "+runDir) {
		t.Errorf("with --resume the timeline does not say what it continues:\n%s", e2e.Tail(stderr, 30))
	}
	if again := usageCommits(third); again < committed {
		t.Errorf("with --resume consumer-usage committed Σ%d, below the earlier run's Σ%d", again, committed)
	} else {
		t.Logf("with --resume: consumer-usage committed Σ%d (earlier run Σ%d)", again, committed)
	}
}

// runOnDir runs the headless dashboard on runDir with args; it returns the
// report (when report is not ""), stderr and the exit code.
func runOnDir(t *testing.T, bin, runDir, report string, args ...string) (board.Report, string, int) {
	t.Helper()
	all := append([]string{"--headless", "--interval", "200ms", "--seed", "7", "--data-dir", runDir}, args...)
	if report != "" {
		all = append(all, "--report", report)
	}
	stderr, code := runHeadlessDashboard(t, bin, all, scenarioEnvWithout(os.Environ(), "KAFKA_BROKER", "MONGO_URI"), 3*time.Minute)
	var rep board.Report
	if report != "" {
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatalf("report: %v (exit %d)\n%s", err, code, e2e.Tail(stderr, 30))
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("report: %v\n%s", err, b)
		}
	}
	return rep, stderr, code
}

// usageCommits sums consumer-usage's committed offsets over the partitions.
func usageCommits(rep board.Report) int64 {
	var sum int64
	for _, p := range rep.Partitions {
		sum += p.Committed[kafkacfg.UsageGroupID]
	}
	return sum
}
