package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/e2e"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// scenarioReport is the part of --report a scenario run adds.
type scenarioReport struct {
	Brokers  string `json:"brokers"`
	Scenario *struct {
		Name   string `json:"name"`
		Passed bool   `json:"passed"`
		Checks []struct {
			What     string `json:"what"`
			Passed   bool   `json:"passed"`
			Observed string `json:"observed"`
		} `json:"checks"`
		Error   string  `json:"error"`
		Seconds float64 `json:"seconds"`
	} `json:"scenario"`
	Processes []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	} `json:"processes"`
	Acks      reportAcks       `json:"acks"`
	Sensors   []reportSensor   `json:"sensors"`
	Retention *reportRetention `json:"retention"`
	// runDir is the run's --data-dir (not in the report).
	runDir string
	// tap is what a reader of the test's own saw of the run (tapped
	// scenarios only).
	tap *e2e.TapResult
}

// tapped are the scenarios whose run a reader of the test's own watches:
// what they name as skipped or forgotten is checked against it.
var tapped = map[string]bool{"offsets-expire": true, "retention": true}

// TestScenariosHeadless runs every guided scenario end to end against the
// real stack (the built binary supervising real child processes), the way a
// workshop would with --headless: the runner performs the presenter's keys,
// and every check must pass on numbers the processes measured.
//
// With KAFKA_BROKER set the scenarios run against that broker, each on a
// topic and a usage group of its own; an unreachable broker fails the test.
func TestScenariosHeadless(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole stack")
	}
	bin := e2e.Binary(t)
	cluster := os.Getenv("KRL_CLUSTER")
	for _, sc := range scenario.Catalog() {
		t.Run(sc.Name, func(t *testing.T) {
			// The cluster scenarios run on their own pass (KRL_CLUSTER=3 in
			// .ci/run): the dashboard starts its cluster of Apache Kafka
			// brokers; that pass runs nothing else.
			// A scenario that kills its broker, or sets the broker's
			// offsets retention, runs on Apache Kafka as the dashboard's
			// own single broker (KRL_CLUSTER=1).
			brokers := sc.Brokers
			switch {
			case (sc.OwnBroker || sc.OffsetsRetention > 0) && cluster == "1":
				brokers = 1
			case sc.Brokers > 0 && cluster != strconv.Itoa(sc.Brokers):
				t.Skipf("needs --cluster %d: run with KRL_CLUSTER=%d (the cluster pass of .ci/run)", sc.Brokers, sc.Brokers)
			case sc.Brokers == 0 && cluster != "":
				t.Skip("KRL_CLUSTER is set: only the cluster scenarios run")
			case sc.OwnBroker && os.Getenv("KAFKA_BROKER") != "":
				t.Skip("kills its broker: on Apache Kafka it runs on the dashboard's own (KRL_CLUSTER=1)")
			case sc.OffsetsRetention > 0 && os.Getenv("KAFKA_BROKER") != "":
				t.Skip("needs --offsets-retention: the lab sets it on its own broker only (on Apache Kafka: KRL_CLUSTER=1)")
			case sc.Brokers == 0:
				// A lab at the scenarios' rate idles at a tenth of a core
				// here: two run side by side. Each cluster takes the machine.
				t.Parallel()
			}
			start := time.Now()
			rep, stderr, code := scenarioRun(t, bin, sc.Name, brokers)
			if code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
			s := rep.Scenario
			if s == nil {
				t.Fatalf("report has no scenario\nstderr:\n%s", e2e.Tail(stderr, 40))
			}
			if s.Name != sc.Name || len(s.Checks) != len(sc.Checks) {
				t.Fatalf("report scenario %q with %d checks, want %q with %d", s.Name, len(s.Checks), sc.Name, len(sc.Checks))
			}
			for _, c := range s.Checks {
				mark := "✓"
				if !c.Passed {
					mark = "✗"
				}
				t.Logf("%s %s: %s", mark, c.What, c.Observed)
				if c.Observed == "" || strings.HasPrefix(c.Observed, "not measured") {
					t.Errorf("check %q was not measured: %q", c.What, c.Observed)
				}
			}
			if !s.Passed || s.Error != "" {
				t.Errorf("scenario failed (error %q)\nstderr:\n%s", s.Error, e2e.Tail(stderr, 60))
				logRunTails(t, rep.runDir, "consumer-usage", "consumer-current", "producer")
			}
			t.Logf("scenario %s on broker %s: %.1f s of scenario, %.1f s with start and shutdown",
				sc.Name, rep.Brokers, s.Seconds, time.Since(start).Seconds())
			switch sc.Name {
			case "acks-loss":
				acksAgainstTheTopic(t, bin, rep, "1", "--cluster", "3")
			case "acks-zero":
				acksAgainstTheTopic(t, bin, rep, "0", clusterArgs(cluster)...)
			case "offsets-expire":
				expiryAgainstTheTopic(t, rep)
			case "retention":
				retentionAgainstTheTopic(t, rep)
			}
		})
	}
}

// clusterArgs are the flags of the dashboard's cluster of KRL_CLUSTER
// brokers, none without.
func clusterArgs(cluster string) []string {
	if cluster == "" {
		return nil
	}
	return []string{"--cluster", cluster}
}

// scenarioRun runs `tui --headless --scenario NAME --report FILE` and
// returns the report, the dashboard's stderr and its exit code.
func scenarioRun(t *testing.T, bin, name string, brokers int) (scenarioReport, string, int) {
	t.Helper()
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	args := []string{"--headless", "--scenario", name, "--report", report,
		"--interval", "200ms", "--seed", "7", "--data-dir", filepath.Join(dir, "run")}
	if name == "grade" {
		// The built-in consumer-usage is graded in the mode that must be exact.
		args = append(args, "--usage-mode", "guarded")
	}
	if sc, _ := scenario.Lookup(name); sc.OffsetsRetention > 0 {
		// Apache Kafka's shortest retention is a minute; the embedded
		// broker's lesson stays short.
		retention := "5s"
		if brokers > 0 {
			retention = "1m"
		}
		args = append(args, "--offsets-retention", retention)
	}
	env := scenarioEnvWithout(os.Environ(), "KAFKA_BROKER", "MONGO_URI")
	limit := 3 * time.Minute
	// The tap's topic and store: the run's own unless given below.
	topic, mongoURI := telemetry.DefaultTopic, ""
	if brokers > 0 {
		// The dashboard's own cluster: 15-35 s to start its JVMs here.
		args = append(args, "--cluster", strconv.Itoa(brokers))
		limit = 6 * time.Minute
	} else if broker := os.Getenv("KAFKA_BROKER"); broker != "" {
		// A broker shared with other suites: a topic and a usage group of
		// this test's own. CreateTopic fails the test if the broker does
		// not answer.
		suffix := e2e.RandomSuffix()
		topic = "krl-scenario-" + name + "-" + suffix
		e2e.CreateTopic(t, broker, topic, e2e.Partitions)
		args = append(args, "--brokers", broker, "--topic", topic, "--usage-group", "krl-scenario-usage-"+suffix)
	}
	if mongo := os.Getenv("MONGO_URI"); mongo != "" {
		uri, err := e2e.WithDatabase(mongo, "krl_scenario_"+e2e.RandomSuffix())
		if err != nil {
			t.Fatalf("MONGO_URI: %v", err)
		}
		args = append(args, "--mongo", uri)
		mongoURI = uri
	}

	var tap *e2e.Tap
	onRunning := func(brokers, mongo string) {
		if mongoURI == "" {
			mongoURI = mongo
		}
		tap = e2e.StartTap(brokers, topic, mongoURI)
	}
	if !tapped[name] {
		onRunning = nil
	}
	stderr, code := runHeadlessWatched(t, bin, args, env, limit, onRunning)
	rep := scenarioReport{runDir: filepath.Join(dir, "run")}
	if tap != nil {
		seen := tap.Stop()
		rep.tap = &seen
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("report: %v (exit code %d)\nstderr:\n%s", err, code, e2e.Tail(stderr, 60))
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	return rep, stderr, code
}

// runHeadlessDashboard runs the dashboard with args and env until it exits, at most
// limit, and returns its stderr and exit code.
func runHeadlessDashboard(t *testing.T, bin string, args, env []string, limit time.Duration) (string, int) {
	t.Helper()
	return runHeadlessWatched(t, bin, args, env, limit, nil)
}

// runningLine is the dashboard's log line once its broker and store answer.
var runningLine = regexp.MustCompile(`msg=running brokers=(\S+) mongo=(\S+)`)

// runHeadlessWatched is runHeadlessDashboard calling onRunning, when not
// nil, with the run's bootstrap servers and store as soon as the dashboard
// logs them, while it runs.
func runHeadlessWatched(t *testing.T, bin string, args, env []string, limit time.Duration, onRunning func(brokers, mongo string)) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The whole group, should the dashboard hang: its children die with it
	// (parent-death signal), but a test must not rely on what it tests.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("run dashboard: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-exited:
			waiting = false
		case <-time.After(100 * time.Millisecond):
			if m := runningLine.FindStringSubmatch(stderr.String()); onRunning != nil && m != nil {
				onRunning(m[1], m[2])
				onRunning = nil
			}
		}
	}
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run dashboard: %v\nstderr:\n%s", err, e2e.Tail(stderr.String(), 40))
	}
	if ctx.Err() != nil {
		t.Fatalf("dashboard still running after %s\nstderr:\n%s", limit, e2e.Tail(stderr.String(), 60))
	}
	return stderr.String(), code
}

// TestScenarioFlags: --list-scenarios lists the contract names and exits 0;
// an unknown name, or --scenario with --script, is a usage error (exit 2).
func TestScenarioFlags(t *testing.T) {
	bin := e2e.Binary(t)
	out, err := exec.Command(bin, "--list-scenarios").Output()
	if err != nil {
		t.Fatalf("--list-scenarios: %v", err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			t.Errorf("line without a description: %q", line)
			continue
		}
		names = append(names, f[0])
	}
	want := []string{"replay", "rebuild-cost", "checkpoint-and-skip", "non-atomic-window", "earliest-vs-latest", "stateless", "rebalance-in-flight", "grade", "leader-election", "min-insync", "key-ordering", "acks-loss", "acks-zero", "partitions-added", "offsets-expire", "retention"}
	if !slices.Equal(names, want) {
		t.Fatalf("--list-scenarios names %q, want %q", names, want)
	}

	script := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(script, []byte("quit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--headless", "--scenario", "no-such-scenario"},
		{"--scenario", "replay", "--script", script},
	} {
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
			t.Errorf("%q: %v, want exit code 2", args, err)
		}
		if !strings.Contains(stderr.String(), "--scenario") {
			t.Errorf("%q: stderr does not explain: %s", args, stderr.String())
		}
	}
}

func scenarioEnvWithout(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// logRunTails logs the last lines of the named roles' logs in runDir: the
// run directory goes with the test, and a failed scenario's cause is
// often in a consumer's own words.
func logRunTails(t *testing.T, runDir string, roles ...string) {
	t.Helper()
	for _, r := range roles {
		f := filepath.Join(runDir, "logs", r+".log")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Logf("--- %s: %v", f, err)
			continue
		}
		t.Logf("--- %s (last lines):\n%s", f, e2e.Tail(string(b), 40))
	}
}
