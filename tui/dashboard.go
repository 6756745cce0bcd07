package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/lab"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/scenario"
	"github.com/kafka-recovery-lab/krl/internal/script"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
	"github.com/kafka-recovery-lab/krl/tui/ui"
)

type dashboardFlags struct {
	lab.Config
	headless      bool
	scriptPath    string
	reportPath    string
	scenario      string
	listScenarios bool
	preload       int
	resume        bool
}

// parseDashboardFlags reads the dashboard's flags; -h prints the usage, the
// keys and the flags on stdout and returns flag.ErrHelp.
func parseDashboardFlags(args []string, stdout io.Writer) (dashboardFlags, error) {
	var f dashboardFlags
	fs := flag.NewFlagSet("krl", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText, "\ndashboard keys:\n", keysHelp(), "\ndashboard flags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.Brokers, "brokers", os.Getenv("KAFKA_BROKER"), "Kafka bootstrap servers; empty starts the embedded broker (env KAFKA_BROKER)")
	fs.IntVar(&f.Cluster, "cluster", 0, "start a real Apache Kafka cluster of `N` brokers (1-5) and a KRaft controller instead of the embedded broker (needs Java 17+ and Maven; see README)")
	fs.StringVar(&f.Mongo, "mongo", os.Getenv("MONGO_URI"), "MongoDB URI; empty starts the embedded store (env MONGO_URI)")
	fs.StringVar(&f.Topic, "topic", telemetry.DefaultTopic, "topic name")
	fs.StringVar(&f.RunDir, "data-dir", "", "run directory for embedded data and logs (default: a fresh one under the temp dir)")
	fs.IntVar(&f.Sensors, "sensors", 10, "number of simulated sensors")
	fs.DurationVar(&f.Interval, "interval", time.Second, "time between two messages of one sensor")
	fs.Int64Var(&f.Seed, "seed", 0, "producer seed for reproducible data (0: time-based)")
	fs.StringVar(&f.UsageMode, "usage-mode", string(lesson.Naive), "consumer-usage mode: naive (the article) or guarded")
	fs.StringVar(&f.UsageReset, "usage-reset", "latest", "consumer-usage offset reset: latest (fixed group) or earliest (fresh group)")
	fs.StringVar(&f.Rebuild, "rebuild", string(lesson.Replay), "how consumer-current rebuilds its state at a start: replay (the whole topic, the seed's), snapshot (a file it keeps, then what follows) or changelog (a compacted topic it keeps, then what follows)")
	fs.StringVar(&f.UsageGroup, "usage-group", kafkacfg.UsageGroupID, "consumer-usage's fixed group (with reset latest); give each dashboard sharing one broker its own")
	fs.Func("usage-cmd", "run `CMD ARGS` as consumer-usage instead of the built-in one: your consumer, graded by the audit (split into arguments as a shell splits words, with no shell; docs/your-consumer.md)", func(s string) error {
		args, err := cli.SplitArgs(s)
		if err == nil && len(args) == 0 {
			err = errors.New("no command")
		}
		f.UsageCmd = args
		return err
	})
	fs.DurationVar(&f.Retention, "retention", 0, "give the topic a short retention of `D` (e.g. 20s) with small segments from the start: Kafka deletes its older records; the T key sets it later (0: the topic's own)")
	fs.DurationVar(&f.StoreLatency, "store-latency", 0, "delay every request to the embedded store by `D` (a slow store: consumer-usage backpressure, consumer-query 503)")
	fs.DurationVar(&f.OffsetsRetention, "offsets-retention", 0, "the lab's broker deletes a group's committed offsets once the group has been empty for `D` (0: the broker's default, 7 days); Apache Kafka (--cluster) takes whole minutes from 1m")
	fs.DurationVar(&f.ConnectTimeout, "connect-timeout", lab.DefaultConnectTimeout, "how long to wait for the broker and the store to answer at the start before saying they are down")
	fs.BoolVar(&f.headless, "headless", false, "supervise without a terminal UI, logging events to stderr")
	fs.StringVar(&f.scriptPath, "script", "", "play actions from FILE (see README)")
	fs.StringVar(&f.reportPath, "report", "", "write a JSON snapshot to FILE on exit")
	fs.StringVar(&f.scenario, "scenario", "", "start the guided scenario NAME (--list-scenarios lists them, and the --cluster N a cluster one needs); with --headless it runs to the end and quits")
	fs.BoolVar(&f.listScenarios, "list-scenarios", false, "print the guided scenarios, each with what it needs to run, and exit")
	fs.BoolVar(&f.resume, "resume", false, "continue the earlier run kept in --data-dir (its topic, commits and usage records); without it such a directory is refused")
	fs.IntVar(&f.preload, "preload", 0, "publish `N` messages of back-dated history before starting, so a replay from earliest takes a while (embedded broker only)")
	if err := cli.Parse(fs, args); err != nil {
		return f, err
	}
	return f, checkDashboardFlags(f)
}

// checkDashboardFlags checks the values and the combinations of the
// dashboard's flags.
func checkDashboardFlags(f dashboardFlags) error {
	if err := cli.CheckTopic(f.Topic); err != nil {
		return err
	}
	if err := checkLabFlags(f.Config); err != nil {
		return err
	}
	if f.UsageGroup == "" {
		return cli.Usagef("--usage-group is empty")
	}
	if f.ConnectTimeout < time.Second || f.ConnectTimeout > 5*time.Minute {
		return cli.Usagef("--connect-timeout must be between 1s and 5m, got %s", f.ConnectTimeout)
	}
	if err := checkStackFlags(f); err != nil {
		return err
	}
	if f.scenario != "" {
		if _, ok := scenario.Lookup(f.scenario); !ok {
			return cli.Usagef("--scenario: %v", scenario.ErrUnknown(f.scenario))
		}
		if f.scriptPath != "" {
			return cli.Usagef("--scenario and --script cannot be combined: a scenario plays its own actions")
		}
	}
	return nil
}

// checkStackFlags checks the flags that choose the broker and the store:
// --cluster, --preload and --store-latency need the lab's own.
func checkStackFlags(f dashboardFlags) error {
	if f.preload < 0 || f.preload > 10_000_000 {
		return cli.Usagef("--preload must be between 0 and 10000000, got %d", f.preload)
	}
	if f.StoreLatency < 0 || f.StoreLatency > time.Minute {
		return cli.Usagef("--store-latency must be between 0 and 1m, got %s", f.StoreLatency)
	}
	if f.Retention != 0 && (f.Retention < kafkacfg.RetentionLeast || f.Retention > kafkacfg.RetentionMost) {
		return cli.Usagef("--retention must be between %s and %s (0: the topic's own), got %s", kafkacfg.RetentionLeast, kafkacfg.RetentionMost, f.Retention)
	}
	if f.StoreLatency > 0 && f.Mongo != "" {
		return cli.Usagef("--store-latency needs the embedded store: it cannot be combined with --mongo / MONGO_URI")
	}
	if f.Cluster < 0 || f.Cluster > 5 {
		return cli.Usagef("--cluster must be between 1 and 5 brokers (0: off), got %d", f.Cluster)
	}
	if f.Cluster > 0 && f.Brokers != "" {
		return cli.Usagef("--cluster starts its own brokers: it cannot be combined with --brokers / KAFKA_BROKER")
	}
	if f.preload > 0 && f.Cluster > 0 {
		return cli.Usagef("--preload needs the embedded broker: it cannot be combined with --cluster")
	}
	if f.preload > 0 && f.Brokers != "" {
		return cli.Usagef("--preload needs the embedded broker: it cannot be combined with --brokers / KAFKA_BROKER")
	}
	return checkOffsetsRetention(f.Config)
}

// checkOffsetsRetention checks --offsets-retention (the dashboard's and
// serve's) against the broker it is for: the lab writes it into the
// configuration of its own brokers only.
func checkOffsetsRetention(f lab.Config) error {
	if f.OffsetsRetention == 0 {
		return nil
	}
	if f.Brokers != "" {
		return cli.Usagef("--offsets-retention sets the lab's own broker: an external one (--brokers / KAFKA_BROKER) keeps its offsets.retention.minutes, set in its server.properties")
	}
	if err := kafkacfg.CheckOffsetsRetention(f.OffsetsRetention, f.Cluster > 0); err != nil {
		return cli.Usagef("--offsets-retention: %v", err)
	}
	return nil
}

// checkLabFlags checks the lab's flags the dashboard and serve share.
func checkLabFlags(c lab.Config) error {
	if c.Sensors < 1 || c.Sensors > 1000 {
		return cli.Usagef("--sensors must be between 1 and 1000, got %d", c.Sensors)
	}
	if c.Interval < 10*time.Millisecond {
		return cli.Usagef("--interval must be at least 10ms, got %s", c.Interval)
	}
	if _, err := lesson.ParseMode(c.UsageMode); err != nil {
		return cli.Usagef("--usage-mode: %v", err)
	}
	if _, err := lesson.ParseReset(c.UsageReset); err != nil {
		return cli.Usagef("--usage-reset: %v", err)
	}
	if c.Rebuild != "" {
		if _, err := lesson.ParseRebuild(c.Rebuild); err != nil {
			return cli.Usagef("--rebuild: %v", err)
		}
	}
	if len(c.UsageCmd) > 0 {
		if _, err := exec.LookPath(c.UsageCmd[0]); err != nil {
			return cli.Usagef("--usage-cmd: %v", err)
		}
	}
	return nil
}

func runDashboard(args []string) int {
	f, err := parseDashboardFlags(args, os.Stdout)
	if err != nil {
		return exitFlags(err)
	}
	if f.listScenarios {
		fmt.Print(scenario.List())
		return cli.ExitOK
	}
	if err := checkReportPath(f.reportPath); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	actions, err := readScript(f.scriptPath)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if err := needTerminal(f.headless); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if f.RunDir, err = absRunDir(f.RunDir); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	resumed, err := checkEarlierRun(f.RunDir, f.resume)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	unwritable := func(err error) int {
		return cli.Exit(os.Stderr, fmt.Errorf("--data-dir %s is not a writable directory (%v): choose another with --data-dir, or leave it out for a fresh one under the temp dir", f.RunDir, err))
	}
	// The lab's own diagnostics go to a file: stderr is the terminal the
	// dashboard draws on.
	var logFile io.Closer
	if f.Log, logFile, err = lab.OpenLog(f.RunDir); err != nil {
		return unwritable(err)
	}
	defer logFile.Close()
	logs := filepath.Join(f.RunDir, "logs")
	// Whatever happens from here on, the last line says where to look.
	defer fmt.Fprintf(os.Stderr, "logs of this run: %s\n", logs)

	if err := preloadIfAsked(f); err != nil {
		return cli.Exit(os.Stderr, err)
	}

	f.Resumed = resumed != ""
	l, err := newLab(f.Config, resumed)
	if err != nil {
		return cli.Exit(os.Stderr, err)
	}
	// Children die with the dashboard even if it panics.
	defer func() {
		if r := recover(); r != nil {
			l.KillAll()
			panic(r)
		}
	}()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	if f.headless {
		return runHeadless(l, f, actions, sigs)
	}
	return runTUI(l, f, actions, sigs)
}

// exitFlags reports a flags error; a usage error points at krl -h.
func exitFlags(err error) int {
	code := cli.Exit(os.Stderr, err)
	if code == cli.ExitUsage {
		fmt.Fprintln(os.Stderr, "(krl -h lists the dashboard's flags and keys)")
	}
	return code
}

// needTerminal is the error of a dashboard started without a terminal
// (nil when it has one, or runs headless).
func needTerminal(headless bool) error {
	if err := checkTerminal(); err != nil && !headless {
		return fmt.Errorf("the dashboard needs a terminal (%v): run it in one, or add --headless to run without", err)
	}
	return nil
}

// newLab makes the lab, noting what an earlier run in the same directory
// left (resumed, "" for nothing).
func newLab(cfg lab.Config, resumed string) (*lab.Lab, error) {
	l, err := lab.New(cfg)
	if err != nil {
		return nil, err
	}
	if resumed != "" {
		l.Note(resumed)
	}
	return l, nil
}

// readScript parses the --script file (nil actions without one).
func readScript(path string) ([]script.Action, error) {
	if path == "" {
		return nil, nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("--script: %v", err)
	}
	actions, err := script.Parse(file)
	file.Close()
	if err != nil {
		return nil, cli.Usagef("--script %s: %v", path, err)
	}
	return actions, nil
}

// absRunDir is --data-dir as an absolute path; without it, a fresh
// directory under the temp dir.
func absRunDir(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "krl-run-"+time.Now().Format("20060102-150405")+"-"); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// preloadIfAsked publishes --preload's messages before the lab starts.
func preloadIfAsked(f dashboardFlags) error {
	if f.preload <= 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "preloading %d messages into %s...\n", f.preload, f.Topic)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	err := preloadTopic(ctx, f.Config, f.preload)
	stop()
	if err != nil {
		return fmt.Errorf("--preload: %w", err)
	}
	return nil
}

// dashboardReport is the --report JSON: the board's snapshot and, after a
// guided scenario, its result.
type dashboardReport struct {
	board.Report
	Scenario *scenario.Result `json:"scenario,omitempty"`
}

// finish writes the report (before the children stop, so it shows the
// run as it was) and shuts everything down.
func finish(l *lab.Lab, f dashboardFlags, sigs <-chan os.Signal, rep dashboardReport, code int) int {
	if f.reportPath != "" {
		if err := writeReport(f.reportPath, rep); err != nil {
			fmt.Fprintln(os.Stderr, "error: report:", err)
			code = cli.ExitError
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		// A second signal while stopping: no more waiting.
		if _, ok := <-sigs; ok {
			l.KillAll()
			cancel()
		}
	}()
	if err := l.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
	}
	return code
}

func writeReport(path string, rep dashboardReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// startScript plays the actions in the background; its result arrives on
// the returned channel (nil when there is no script).
func startScript(ctx context.Context, l *lab.Lab, actions []script.Action) <-chan error {
	if actions == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- l.RunScript(ctx, actions) }()
	return done
}

func runHeadless(l *lab.Lab, f dashboardFlags, actions []script.Action, sigs <-chan os.Signal) int {
	logger := slog.New(slog.NewTextHandler(redact.Writer(os.Stderr), nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range l.Inputs() { // the lab's own board is what headless reads
		}
	}()
	code := cli.ExitOK
	sig, err := launchUnlessSignalled(ctx, l, sigs)
	switch {
	case sig != nil:
		// Asked to stop, as a signal later would: not a failure.
		logger.Info("signal while starting, stopping", "signal", sig.String())
		return finish(l, f, sigs, dashboardReport{Report: l.Report()}, cli.ExitOK)
	case err != nil:
		logger.Error("start failed", "err", err, "run_dir", f.RunDir)
		return finish(l, f, sigs, dashboardReport{Report: l.Report()}, cli.ExitError)
	}
	brokers, mongo := l.Addresses()
	logger.Info("running", "brokers", brokers, "mongo", mongo, "run_dir", f.RunDir)
	scriptDone := startScript(ctx, l, actions)
	scenarioDone := startScenario(ctx, l, f.scenario)
	var result *scenario.Result
	// stopScenario ends a scenario cut short (a signal, a quit) and keeps
	// its partial result for the report.
	stopScenario := func() {
		if scenarioDone == nil {
			return
		}
		cancel()
		select {
		case res := <-scenarioDone:
			result = &res
		case <-time.After(30 * time.Second):
			logger.Error("the scenario did not stop within 30s")
		}
		scenarioDone = nil
	}
	var seq uint64
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	printEvents := func() {
		for _, e := range l.EventsSince(seq) {
			fmt.Fprintln(os.Stderr, e.String())
			seq = e.Seq
		}
	}
loop:
	for {
		select {
		case <-ticker.C:
			printEvents()
		case sig := <-sigs:
			logger.Info("signal, stopping", "signal", sig.String())
			stopScenario()
			break loop
		case <-l.Done():
			stopScenario()
			break loop
		case res := <-scenarioDone:
			scenarioDone = nil
			result = &res
			break loop
		case err := <-scriptDone:
			scriptDone = nil
			if err != nil {
				logger.Error("script failed", "err", err)
				code = cli.ExitError
				break loop
			}
		}
	}
	printEvents()
	if result != nil && !result.Passed {
		// Why: the run stopped early (error), or the checks that failed.
		var failed []string
		for _, c := range result.Checks {
			if !c.Passed {
				failed = append(failed, c.What+": "+c.Observed)
			}
		}
		logger.Error("scenario failed", "scenario", result.Name, "error", result.Error, "failed", strings.Join(failed, "; "))
	}
	return finish(l, f, sigs, dashboardReport{Report: l.Report(), Scenario: result}, scenarioExitCode(result, code))
}

// launchUnlessSignalled launches the lab; a signal while it starts ends the
// start at once (a wait for a broker to listen included) and is returned.
func launchUnlessSignalled(ctx context.Context, l *lab.Lab, sigs <-chan os.Signal) (os.Signal, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	launched := make(chan error, 1)
	go func() { launched <- l.Launch(ctx) }()
	select {
	case err := <-launched:
		return nil, err
	case sig := <-sigs:
		cancel()
		<-launched
		return sig, nil
	}
}

// scenarioExitCode: a headless scenario run fails (exit 1) when any check
// failed or the run stopped early.
func scenarioExitCode(res *scenario.Result, code int) int {
	if res != nil && !res.Passed && code == cli.ExitOK {
		return cli.ExitError
	}
	return code
}

// startScenario runs a guided scenario headless (the runner performs the
// presenter's keys) in the background; nil when there is none.
func startScenario(ctx context.Context, l *lab.Lab, name string) <-chan scenario.Result {
	sc, ok := scenario.Lookup(name)
	if !ok {
		return nil
	}
	done := make(chan scenario.Result, 1)
	go func() { done <- scenario.Runner{Host: l, OnProgress: l.Narrate}.Run(ctx, sc) }()
	return done
}

// launchAndPlay launches the lab, then starts the scenario and plays the
// script asked for. A failed script ends the run (ExitError); one cut
// short by the dashboard closing (ctx) did not fail.
func launchAndPlay(ctx context.Context, l *lab.Lab, scenarioName string, session *scenario.Session, actions []script.Action) int {
	if err := l.Launch(ctx); err != nil {
		// The board shows it (LaunchFailed): rows failed with the cause,
		// r retries.
		return cli.ExitOK
	}
	if scenarioName != "" {
		if err := session.Start(scenarioName); err != nil {
			l.Note("scenario: " + err.Error())
		}
	}
	done := startScript(ctx, l, actions)
	if done == nil {
		return cli.ExitOK
	}
	if err := <-done; err != nil && ctx.Err() == nil {
		l.Note("script failed: " + err.Error())
		l.RequestQuit()
		return cli.ExitError
	}
	return cli.ExitOK
}

func runTUI(l *lab.Lab, f dashboardFlags, actions []script.Action, sigs <-chan os.Signal) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// With a presenter at the keyboard, scenarios wait for their keys.
	session := &scenario.Session{Runner: scenario.Runner{Host: l, Interactive: true, OnProgress: l.Narrate}}
	model := ui.New(l.NewBoard(), l, ui.Options{Scenarios: session})
	p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithoutSignalHandler(), tea.WithFPS(ui.FPS))
	go ui.Forward(l.Inputs(), p.Send, ui.Frame)
	played := make(chan int, 1)
	go func() { played <- launchAndPlay(ctx, l, f.scenario, session, actions) }()
	go func() {
		select {
		case <-sigs:
		case <-l.Done():
		}
		p.Quit()
	}()
	code := cli.ExitOK
	shown := time.Now()
	if _, err := p.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "error: dashboard:", err)
		code = cli.ExitError
	}
	// The launch and the script end before the lab is shut down: nothing
	// may reach its inputs after that.
	cancel()
	select {
	case c := <-played:
		code = max(code, c)
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "error: the lab's launch did not end within 30 s of the dashboard closing")
	}
	// The dashboard's own clock: .ci/run compares the demo GIF's length
	// with how long the dashboard was on screen.
	f.Log.Info("dashboard closed", "on_screen_seconds", fmt.Sprintf("%.1f", time.Since(shown).Seconds()))
	// A scenario still running is stopped (its cleanup done) before the
	// children are; the report carries the latest result, if any.
	session.Stop()
	rep := dashboardReport{Report: l.Report()}
	if res, ok := session.Last(); ok {
		rep.Scenario = &res
	}
	return finish(l, f, sigs, rep, code)
}
