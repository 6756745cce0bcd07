//go:build linux

package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

const deadline = 15 * time.Second

func newTestSupervisor(t *testing.T, cfg Config) *Supervisor {
	t.Helper()
	if cfg.RunDir == "" {
		cfg.RunDir = t.TempDir()
	}
	sup := New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := sup.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return sup
}

func define(t *testing.T, sup *Supervisor, name, role string, args ...string) {
	t.Helper()
	if err := sup.Define(Spec{Name: name, Args: args, Env: fakeEnvFor(role)}); err != nil {
		t.Fatal(err)
	}
}

// expect reads events until match accepts one, failing after the deadline.
// Events that do not match are skipped but kept for the failure message.
func expect[E Event](t *testing.T, sup *Supervisor, what string, match func(E) bool) E {
	t.Helper()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case ev, ok := <-sup.Events():
			if !ok {
				t.Fatalf("events closed while waiting for %s; saw %v", what, seen)
			}
			if e, ok := ev.(E); ok && (match == nil || match(e)) {
				return e
			}
			seen = append(seen, fmt.Sprintf("%T%+v", ev, ev))
		case <-timer.C:
			t.Fatalf("no %s within %v; saw %v", what, deadline, seen)
		}
	}
}

func statusOf(name string, typ status.Type) func(Status) bool {
	return func(s Status) bool { return s.Name == name && s.Event.Type == typ }
}

func logLine(name, stream, line string) func(Log) bool {
	return func(l Log) bool { return l.Name == name && l.Stream == stream && l.Line == line }
}

func exitOf(name string) func(Exited) bool {
	return func(e Exited) bool { return e.Name == name }
}

func grandchildPID(t *testing.T, sup *Supervisor, name string) int {
	t.Helper()
	l := expect(t, sup, name+" grandchild pid", func(l Log) bool {
		return l.Name == name && strings.HasPrefix(l.Line, "grandchild=")
	})
	pid, err := strconv.Atoi(strings.TrimPrefix(l.Line, "grandchild="))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// procID names one process incarnation: pid plus start time, so a reused
// pid is not mistaken for the original.
type procID struct {
	pid   int
	start string
}

// procStat returns the state letter and start time of pid from /proc.
func procStat(pid int) (state, start string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", "", false
	}
	return f[0], f[19], true // fields 3 (state) and 22 (starttime)
}

func identify(t *testing.T, pid int) procID {
	t.Helper()
	state, start, ok := procStat(pid)
	if !ok || state == "Z" {
		t.Fatalf("pid %d is not running (state %q)", pid, state)
	}
	return procID{pid, start}
}

// alive: the same incarnation exists and is not a zombie (a zombie has
// finished; whether its new parent reaps it is not ours to decide).
func (p procID) alive() bool {
	state, start, ok := procStat(p.pid)
	return ok && start == p.start && state != "Z"
}

func awaitGone(t *testing.T, what string, ids ...procID) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		var alive []int
		for _, id := range ids {
			if id.alive() {
				alive = append(alive, id.pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s still alive after %v: %v", what, deadline, alive)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

// adoptOrphans makes this test process the reaper of descendants orphaned
// during the test (instead of PID 1, which in some containers never reaps),
// so reap can collect them.
func adoptOrphans(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// reap collects adopted processes that have ended (never exec.Cmd's own).
func reap(ids ...procID) {
	for _, id := range ids {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(id.pid, &ws, unix.WNOHANG, nil)
	}
}

func readLog(t *testing.T, sup *Supervisor, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sup.cfg.RunDir, "logs", name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStartStatusLogSignalStop(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "producer", "events", "one", "two")
	if err := sup.Start("producer"); err != nil {
		t.Fatal(err)
	}
	st := expect(t, sup, "Started", func(e Started) bool { return e.Name == "producer" })
	if st.PID <= 0 || sup.PID("producer") != st.PID || !sup.Running("producer") {
		t.Fatalf("Started %+v, PID() %d, Running %v", st, sup.PID("producer"), sup.Running("producer"))
	}
	if pgid, _ := syscall.Getpgid(st.PID); pgid != st.PID {
		t.Fatalf("child pgid %d, want its own group %d", pgid, st.PID)
	}
	expect(t, sup, "stdout line", logLine("producer", "stdout", "hello stdout"))
	expect(t, sup, "args line", logLine("producer", "stdout", "args: one two"))
	ready := expect(t, sup, "status started", statusOf("producer", status.Started))
	if ready.Event.Role != "fake" || ready.Event.PID != st.PID {
		t.Fatalf("status event %+v", ready.Event)
	}

	if err := sup.Signal("producer", syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	expect(t, sup, "paused", statusOf("producer", status.Paused))
	if err := sup.Signal("producer", syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	expect(t, sup, "resumed", statusOf("producer", status.Resumed))

	if err := sup.Stop("producer"); err != nil {
		t.Fatal(err)
	}
	if sup.Running("producer") || sup.PID("producer") != 0 {
		t.Fatal("still running after Stop returned")
	}
	expect(t, sup, "stopping", statusOf("producer", status.Stopping))
	ex := expect(t, sup, "Exited", exitOf("producer"))
	want := Exited{Name: "producer", PID: st.PID, ExitCode: 0, Signal: "", Deliberate: true}
	ex.At = time.Time{}
	if ex != want {
		t.Fatalf("Exited %+v, want %+v", ex, want)
	}

	log := readLog(t, sup, "producer")
	for _, line := range []string{"started pid " + strconv.Itoa(st.PID) + ": one two", "hello stdout", "hello stderr", "bye", "stopped pid " + strconv.Itoa(st.PID) + ": exit code 0"} {
		if !strings.Contains(log, line) {
			t.Errorf("log file lacks %q:\n%s", line, log)
		}
	}
	if strings.Contains(log, `"event"`) {
		t.Errorf("status events leaked into the log file:\n%s", log)
	}
	tail := sup.Tail("producer", 2)
	if len(tail) != 2 || tail[0] != "bye" || !strings.Contains(tail[1], "stopped pid") {
		t.Fatalf("Tail(2) = %q", tail)
	}
}

func TestCrashKillsTheGroup(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "consumer-usage", "grandchild")
	if err := sup.Start("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	child := identify(t, expect(t, sup, "Started", func(Started) bool { return true }).PID)
	grandchild := identify(t, grandchildPID(t, sup, "consumer-usage"))
	expect(t, sup, "ready", statusOf("consumer-usage", status.Started))

	if err := sup.Crash("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	ex := expect(t, sup, "Exited", exitOf("consumer-usage"))
	if ex.Signal != "SIGKILL" || ex.ExitCode != -1 || ex.Deliberate || ex.Err != nil {
		t.Fatalf("Exited %+v, want SIGKILL, -1, not deliberate", ex)
	}
	awaitGone(t, "child and grandchild", child, grandchild)
	if !strings.Contains(readLog(t, sup, "consumer-usage"), "crashed pid") {
		t.Error("log file lacks the crash line")
	}
}

func TestStopKillsGrandchildThatIgnoresSIGTERM(t *testing.T) {
	// The child exits 0 on SIGTERM, its grandchild ignores it: the leftover
	// group must still be SIGKILLed before Exited is reported.
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "store", "grandchild")
	if err := sup.Start("store"); err != nil {
		t.Fatal(err)
	}
	grandchild := identify(t, grandchildPID(t, sup, "store"))
	expect(t, sup, "ready", statusOf("store", status.Started))
	start := time.Now()
	if err := sup.Stop("store"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= DefaultStopTimeout {
		t.Fatalf("Stop took %v: it waited for the grandchild instead of the child", took)
	}
	ex := expect(t, sup, "Exited", exitOf("store"))
	if ex.ExitCode != 0 || ex.Signal != "" || !ex.Deliberate {
		t.Fatalf("Exited %+v", ex)
	}
	awaitGone(t, "grandchild", grandchild)
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	const grace = 300 * time.Millisecond
	sup := newTestSupervisor(t, Config{StopTimeout: grace})
	define(t, sup, "broker", "ignore-term")
	if err := sup.Start("broker"); err != nil {
		t.Fatal(err)
	}
	expect(t, sup, "ready", statusOf("broker", status.Started))
	start := time.Now()
	if err := sup.Stop("broker"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < grace {
		t.Fatalf("SIGKILL after %v, before the %v grace period", took, grace)
	}
	ex := expect(t, sup, "Exited", exitOf("broker"))
	if ex.Signal != "SIGKILL" || ex.ExitCode != -1 || !ex.Deliberate {
		t.Fatalf("Exited %+v, want SIGKILL, deliberate", ex)
	}
}

func TestExitCodeAndCrashPoint(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	if err := sup.Define(Spec{Name: "producer", Env: []string{fakeEnv + "=exit", fakeCodeEnv + "=3"}}); err != nil {
		t.Fatal(err)
	}
	define(t, sup, "consumer-usage", "crash-point")

	if err := sup.Start("producer"); err != nil {
		t.Fatal(err)
	}
	ex := expect(t, sup, "producer Exited", exitOf("producer"))
	if ex.ExitCode != 3 || ex.Signal != "" || ex.Deliberate {
		t.Fatalf("Exited %+v, want code 3, no signal, not deliberate", ex)
	}
	if tail := sup.Tail("producer", 10); len(tail) != 3 || tail[1] != "exiting with 3" || !strings.Contains(tail[2], "crashed pid") {
		t.Fatalf("Tail = %q", tail)
	}

	if err := sup.Start("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	cp := expect(t, sup, "crash point", statusOf("consumer-usage", status.CrashPoint))
	if cp.Event.Point != "after-delta" || cp.Event.Offset != 42 {
		t.Fatalf("crash point event %+v", cp.Event)
	}
	ex = expect(t, sup, "consumer Exited", exitOf("consumer-usage"))
	if ex.Signal != "SIGKILL" || ex.ExitCode != -1 || ex.Deliberate {
		t.Fatalf("Exited %+v, want SIGKILL, not deliberate", ex)
	}
}

func TestRestartUsesNewArgs(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "consumer-usage", "events", "--mode", "naive")
	if err := sup.Restart("consumer-usage"); err != nil { // Restart of a stopped process starts it
		t.Fatal(err)
	}
	first := expect(t, sup, "first start", func(Started) bool { return true })
	expect(t, sup, "naive args", logLine("consumer-usage", "stdout", "args: --mode naive"))
	expect(t, sup, "ready", statusOf("consumer-usage", status.Started))

	if err := sup.SetArgs("consumer-usage", []string{"--mode", "guarded"}); err != nil {
		t.Fatal(err)
	}
	if err := sup.Restart("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	ex := expect(t, sup, "Exited", exitOf("consumer-usage"))
	if !ex.Deliberate || ex.PID != first.PID {
		t.Fatalf("Exited %+v", ex)
	}
	second := expect(t, sup, "second start", func(Started) bool { return true })
	if second.PID == first.PID || sup.PID("consumer-usage") != second.PID {
		t.Fatalf("second start pid %d, first %d, PID() %d", second.PID, first.PID, sup.PID("consumer-usage"))
	}
	expect(t, sup, "guarded args", logLine("consumer-usage", "stdout", "args: --mode guarded"))
	if n := strings.Count(readLog(t, sup, "consumer-usage"), " started pid "); n != 2 {
		t.Fatalf("log file has %d start headers, want 2 (appended across restarts)", n)
	}
}

func TestEscapedDescendantDoesNotHangExit(t *testing.T) {
	sup := newTestSupervisor(t, Config{drainTimeout: 200 * time.Millisecond})
	define(t, sup, "query", "escape")
	adoptOrphans(t) // before the child exits and orphans the escaped grandchild
	if err := sup.Start("query"); err != nil {
		t.Fatal(err)
	}
	escaped := identify(t, grandchildPID(t, sup, "query"))
	t.Cleanup(func() {
		_ = syscall.Kill(escaped.pid, syscall.SIGKILL)
		awaitGone(t, "escaped grandchild", escaped)
		reap(escaped)
	})
	ex := expect(t, sup, "Exited", exitOf("query"))
	if ex.ExitCode != 0 {
		t.Fatalf("Exited %+v", ex)
	}
}

func TestErrors(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	for _, name := range []string{"", "a/b", "..", ".hidden", "sp ace"} {
		if err := sup.Define(Spec{Name: name}); !errors.Is(err, ErrBadName) {
			t.Errorf("Define(%q) = %v, want ErrBadName", name, err)
		}
	}
	calls := map[string]func() error{
		"Start":   func() error { return sup.Start("nope") },
		"Stop":    func() error { return sup.Stop("nope") },
		"Crash":   func() error { return sup.Crash("nope") },
		"Restart": func() error { return sup.Restart("nope") },
		"Signal":  func() error { return sup.Signal("nope", syscall.SIGUSR1) },
		"SetArgs": func() error { return sup.SetArgs("nope", nil) },
	}
	for op, call := range calls {
		if err := call(); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("%s(unknown) = %v, want ErrUnknown naming it", op, err)
		}
	}
	if sup.PID("nope") != 0 || sup.Running("nope") || sup.Tail("nope", 5) != nil {
		t.Error("queries of an unknown name should be empty")
	}

	define(t, sup, "producer", "events")
	for op, err := range map[string]error{
		"Stop":   sup.Stop("producer"),
		"Crash":  sup.Crash("producer"),
		"Signal": sup.Signal("producer", syscall.SIGUSR1),
	} {
		if !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s(stopped) = %v, want ErrNotRunning", op, err)
		}
	}
	if err := sup.Start("producer"); err != nil {
		t.Fatal(err)
	}
	if err := sup.Start("producer"); !errors.Is(err, ErrRunning) {
		t.Errorf("second Start = %v, want ErrRunning", err)
	}

	bad := newTestSupervisor(t, Config{Exe: filepath.Join(t.TempDir(), "missing")})
	define(t, bad, "broker", "events")
	if err := bad.Start("broker"); err == nil || bad.Running("broker") {
		t.Fatalf("Start with a missing binary = %v", err)
	}
	if tail := bad.Tail("broker", 1); len(tail) != 1 || !strings.Contains(tail[0], "start broker") {
		t.Errorf("Tail after a failed start = %q", tail)
	}

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := sup.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sup.Start("producer"); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Shutdown = %v, want ErrClosed", err)
	}
	if err := sup.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown = %v", err)
	}
}

func TestShutdownStopsHigherTiersFirst(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	tiers := map[string]int{"broker": 0, "store": 0, "producer": 1, "consumer-current": 1, "consumer-usage": 1}
	for name, tier := range tiers {
		if err := sup.Define(Spec{Name: name, Env: fakeEnvFor("events"), Tier: tier}); err != nil {
			t.Fatal(err)
		}
		if err := sup.Start(name); err != nil {
			t.Fatal(err)
		}
	}
	for range tiers {
		expect(t, sup, "ready", func(s Status) bool { return s.Event.Type == status.Started })
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := sup.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var order []string
	for ev := range sup.Events() { // closed by Shutdown
		if ex, ok := ev.(Exited); ok {
			if !ex.Deliberate || ex.ExitCode != 0 {
				t.Errorf("Exited %+v", ex)
			}
			order = append(order, ex.Name)
		}
	}
	if len(order) != len(tiers) {
		t.Fatalf("exits %v", order)
	}
	for i, name := range order {
		if (i < 3) != (tiers[name] == 1) {
			t.Fatalf("exit order %v: tier 1 must all stop before tier 0", order)
		}
	}
}

func TestShutdownContextCutsGraceShort(t *testing.T) {
	sup := New(Config{StopTimeout: time.Minute}) // no cleanup Shutdown: this test's own is the one that counts
	define(t, sup, "broker", "ignore-term")
	if err := sup.Start("broker"); err != nil {
		t.Fatal(err)
	}
	expect(t, sup, "ready", statusOf("broker", status.Started))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := sup.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	ex := expect(t, sup, "Exited", exitOf("broker"))
	if ex.Signal != "SIGKILL" || !ex.Deliberate {
		t.Fatalf("Exited %+v", ex)
	}
}

func TestKillAll(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "a", "ignore-term")
	define(t, sup, "b", "grandchild")
	var ids []procID
	for _, n := range []string{"a", "b"} {
		if err := sup.Start(n); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, identify(t, sup.PID(n)))
	}
	ids = append(ids, identify(t, grandchildPID(t, sup, "b")))
	sup.KillAll()
	sup.KillAll()
	for range 2 {
		ex := expect(t, sup, "Exited", func(Exited) bool { return true })
		if ex.Signal != "SIGKILL" || !ex.Deliberate {
			t.Fatalf("Exited %+v", ex)
		}
	}
	awaitGone(t, "children", ids...)
}

func TestSlowReaderNeverBlocksChildren(t *testing.T) {
	const lines = 30000 // well over the channel buffer plus the queued-log cap
	sup := newTestSupervisor(t, Config{TailLines: 10})
	if err := sup.Define(Spec{Name: "consumer-current", Env: []string{fakeEnv + "=spam", fakeLines + "=" + strconv.Itoa(lines)}}); err != nil {
		t.Fatal(err)
	}
	if err := sup.Start("consumer-current"); err != nil {
		t.Fatal(err)
	}
	// Nobody reads Events: the child must still get all its output out.
	end := time.Now().Add(deadline)
	for last := fmt.Sprintf("line %d", lines-1); ; time.Sleep(10 * time.Millisecond) {
		if tail := sup.Tail("consumer-current", 1); len(tail) == 1 && tail[0] == last {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("child output stalled; tail %q", sup.Tail("consumer-current", 3))
		}
	}
	if err := sup.Crash("consumer-current"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := sup.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var started, ready, exited, logs int
	for ev := range sup.Events() {
		switch ev.(type) {
		case Started:
			started++
		case Status:
			ready++
		case Exited:
			exited++
		case Log:
			logs++
		}
	}
	if started != 1 || ready != 1 || exited != 1 {
		t.Fatalf("essential events lost: started %d status %d exited %d", started, ready, exited)
	}
	if sup.Dropped() == 0 || logs >= lines {
		t.Fatalf("expected dropped logs: dropped %d, delivered %d", sup.Dropped(), logs)
	}
	if n := strings.Count(readLog(t, sup, "consumer-current"), "\nline "); n != lines {
		t.Fatalf("log file has %d of the %d lines", n, lines)
	}
}

// TestStartFromExitingThread is the Pdeathsig gotcha: a child forked on a
// thread that later exits would be SIGKILLed by the kernel right then.
func TestStartFromExitingThread(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "producer", "events")
	type result struct {
		tid int
		err error
	}
	var r result
	for r.tid == 0 {
		res := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
			tid := unix.Gettid()
			if tid == os.Getpid() {
				// The runtime never exits the main thread (it parks it for
				// good instead), so a child forked here would prove nothing.
				res <- result{}
				return
			}
			res <- result{tid, sup.Start("producer")}
		}()
		r = <-res
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	end := time.Now().Add(deadline)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", r.tid)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("thread %d did not exit", r.tid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A round trip (ready, SIGUSR1, paused) proves the child outlived the
	// thread that asked for it; an Exited fails at once.
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	for {
		select {
		case ev := <-sup.Events():
			switch ev := ev.(type) {
			case Exited:
				t.Fatalf("child died with the thread that started it: %+v", ev)
			case Status:
				switch ev.Event.Type {
				case status.Started:
					if err := sup.Signal("producer", syscall.SIGUSR1); err != nil {
						t.Fatal(err)
					}
				case status.Paused:
					return
				}
			}
		case <-timer.C:
			t.Fatal("no answer from the child")
		}
	}
}

// TestChildrenDieWithSupervisor runs a supervisor in a separate process (this
// test binary again), SIGKILLs it, and checks that its children (kernel
// parent-death signal) and their grandchildren (watchdog) all die.
func TestChildrenDieWithSupervisor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		watchdog bool
		frozen   bool
	}{{"with watchdog", true, false}, {"kernel only", false, false}, {"frozen, with watchdog", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			adoptOrphans(t)
			helper := exec.Command(os.Args[0])
			helper.Env = append(os.Environ(), fakeEnv+"=supervisor", "KRL_SUPERVISOR_HELPER_RUNDIR="+t.TempDir())
			if !tc.watchdog {
				helper.Env = append(helper.Env, helperNoWD+"=1")
			}
			if tc.frozen {
				helper.Env = append(helper.Env, helperFreeze+"=1")
			}
			helper.Stderr = os.Stderr
			stdin, err := helper.StdinPipe() // kept open: the helper idles on it
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := helper.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			killed := false
			defer func() {
				if !killed {
					_ = helper.Process.Kill()
					_ = helper.Wait()
				}
			}()

			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				if sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var rep helperReport
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatal("helper exited before reporting its children")
				}
				if err := json.Unmarshal([]byte(line), &rep); err != nil {
					t.Fatalf("helper said %q: %v", line, err)
				}
			case <-time.After(deadline):
				t.Fatal("helper did not report its children")
			}
			if len(rep.Children) != 3 || len(rep.Grandchildren) != 3 {
				t.Fatalf("helper report %+v", rep)
			}
			var children, grandchildren []procID
			for _, pid := range rep.Children {
				children = append(children, identify(t, pid))
			}
			for _, pid := range rep.Grandchildren {
				grandchildren = append(grandchildren, identify(t, pid))
			}
			if tc.frozen {
				// SIGSTOP is delivered asynchronously: wait for it.
				for _, id := range append(children, grandchildren...) {
					awaitState(t, id.pid, "T")
				}
			}

			if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()
			killed = true

			defer reap(append(children, grandchildren...)...)
			if tc.watchdog {
				awaitGone(t, "children and grandchildren", append(children, grandchildren...)...)
				return
			}
			awaitGone(t, "children", children...)
			// Pdeathsig is not inherited: without the watchdog nothing kills
			// the grandchildren. That is what the watchdog is for.
			survivors := 0
			for _, g := range grandchildren {
				if g.alive() {
					survivors++
					_ = syscall.Kill(g.pid, syscall.SIGKILL)
				}
			}
			awaitGone(t, "grandchildren after cleanup", grandchildren...)
			t.Logf("without the watchdog %d of %d grandchildren outlived the supervisor", survivors, len(grandchildren))
		})
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	cycle := func() {
		sup := New(Config{RunDir: t.TempDir()})
		define(t, sup, "producer", "grandchild")
		define(t, sup, "broker", "ignore-term")
		for _, n := range []string{"producer", "broker"} {
			if err := sup.Start(n); err != nil {
				t.Fatal(err)
			}
		}
		if err := sup.Crash("broker"); err != nil {
			t.Fatal(err)
		}
		if err := sup.Restart("producer"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := sup.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		for range sup.Events() {
		}
	}
	cycle() // starts the process-wide spawner goroutine
	base := runtime.NumGoroutine()
	cycle()
	end := time.Now().Add(deadline)
	for runtime.NumGoroutine() > base {
		if time.Now().After(end) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d, before: %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+100)
	in := "a\r\nb\n\n" + long + "\ntail"
	var got []string
	readLines(strings.NewReader(in), func(l []byte) { got = append(got, string(l)) })
	want := []string{"a", "b", "", long[:maxLine], "tail"}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %.20q (len %d), want %.20q (len %d)", i, got[i], len(got[i]), want[i], len(want[i]))
		}
	}
}

func TestRing(t *testing.T) {
	r := newRing(3)
	if r.last(5) != nil {
		t.Fatal("empty ring")
	}
	for _, l := range []string{"1", "2"} {
		r.add(l)
	}
	if got := strings.Join(r.last(5), ","); got != "1,2" {
		t.Fatalf("got %s", got)
	}
	for _, l := range []string{"3", "4", "5"} {
		r.add(l)
	}
	if got := strings.Join(r.last(5), ","); got != "3,4,5" {
		t.Fatalf("got %s", got)
	}
	if got := strings.Join(r.last(2), ","); got != "4,5" {
		t.Fatalf("got %s", got)
	}
}

func TestFlushKeepsEssentialEvents(t *testing.T) {
	e := newEventQueue()
	for i := range eventBuffer * 2 {
		e.push(Log{Name: "x", Line: strconv.Itoa(i)})
		if i%100 == 0 {
			e.push(Status{Name: "x"})
		}
	}
	e.push(Exited{Name: "x"})
	total := eventBuffer*2 + (eventBuffer*2-1)/100 + 1 + 1
	wantEssential := total - eventBuffer*2
	e.close()
	var logs, essential int
	var last Event
	for ev := range e.out {
		if _, ok := ev.(Log); ok {
			logs++
		} else {
			essential++
		}
		last = ev
	}
	if essential != wantEssential || logs+essential != eventBuffer {
		t.Fatalf("kept %d essential and %d logs", essential, logs)
	}
	if _, ok := last.(Exited); !ok {
		t.Fatalf("last event %T, want Exited (order kept)", last)
	}
	if e.droppedCount() != uint64(total-eventBuffer) {
		t.Fatalf("dropped %d", e.droppedCount())
	}
}

// awaitState waits until pid is in the /proc state letter want ("T" for
// stopped by a signal).
func awaitState(t *testing.T, pid int, want string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		st, _, ok := procStat(pid)
		if ok && st == want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("pid %d in state %q after %v, want %q", pid, st, deadline, want)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

func notStopped(t *testing.T, pid int) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		st, _, ok := procStat(pid)
		if !ok || (st != "T" && st != "t") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("pid %d still stopped (%q) after %v", pid, st, deadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func frozenOf(name string, frozen bool) func(Frozen) bool {
	return func(f Frozen) bool { return f.Name == name && f.Frozen == frozen }
}

func TestFreezeThaw(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "consumer-usage", "grandchild")
	if err := sup.Start("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	child := expect(t, sup, "Started", func(Started) bool { return true }).PID
	grandchild := grandchildPID(t, sup, "consumer-usage")
	expect(t, sup, "ready", statusOf("consumer-usage", status.Started))

	if err := sup.Freeze("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	f := expect(t, sup, "Frozen", frozenOf("consumer-usage", true))
	if f.PID != child || !sup.Frozen("consumer-usage") {
		t.Fatalf("Frozen %+v (child %d), Frozen() %v", f, child, sup.Frozen("consumer-usage"))
	}
	// The whole group stops, the grandchild too.
	awaitState(t, child, "T")
	awaitState(t, grandchild, "T")
	if err := sup.Freeze("consumer-usage"); err != nil { // idempotent, no second event
		t.Fatal(err)
	}
	if err := sup.Thaw("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	expect(t, sup, "thawed", frozenOf("consumer-usage", false))
	if sup.Frozen("consumer-usage") {
		t.Fatal("Frozen() after Thaw")
	}
	notStopped(t, child)
	notStopped(t, grandchild)
	if err := sup.Thaw("consumer-usage"); err != nil { // thawing a thawed one does nothing
		t.Fatal(err)
	}
	log := readLog(t, sup, "consumer-usage")
	for _, want := range []string{"frozen pid " + strconv.Itoa(child) + " (SIGSTOP)", "thawed pid " + strconv.Itoa(child) + " (SIGCONT)"} {
		if strings.Count(log, want) != 1 {
			t.Errorf("log file has %d lines %q, want 1:\n%s", strings.Count(log, want), want, log)
		}
	}
	if err := sup.Freeze("nobody"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Freeze(unknown) = %v", err)
	}
}

// A frozen process keeps SIGTERM pending: Stop must continue it so the
// process handles the SIGTERM itself (exit 0), well before the SIGKILL
// that would otherwise end it after the grace period.
func TestStopFrozenIsGraceful(t *testing.T) {
	const grace = 4 * time.Second
	sup := newTestSupervisor(t, Config{StopTimeout: grace})
	define(t, sup, "producer", "events")
	if err := sup.Start("producer"); err != nil {
		t.Fatal(err)
	}
	pid := expect(t, sup, "Started", func(Started) bool { return true }).PID
	expect(t, sup, "ready", statusOf("producer", status.Started))
	if err := sup.Freeze("producer"); err != nil {
		t.Fatal(err)
	}
	awaitState(t, pid, "T")
	start := time.Now()
	if err := sup.Stop("producer"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= grace {
		t.Fatalf("Stop of a frozen process took %v: the SIGTERM waited for the SIGKILL", took)
	}
	expect(t, sup, "stopping", statusOf("producer", status.Stopping))
	ex := expect(t, sup, "Exited", exitOf("producer"))
	if ex.ExitCode != 0 || ex.Signal != "" || !ex.Deliberate {
		t.Fatalf("Exited %+v, want exit 0 (it handled its SIGTERM), deliberate", ex)
	}
	if sup.Frozen("producer") {
		t.Fatal("Frozen() after Stop")
	}
}

func TestCrashFrozenKillsTheGroup(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	define(t, sup, "consumer-usage", "grandchild")
	if err := sup.Start("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	child := identify(t, expect(t, sup, "Started", func(Started) bool { return true }).PID)
	grandchild := identify(t, grandchildPID(t, sup, "consumer-usage"))
	expect(t, sup, "ready", statusOf("consumer-usage", status.Started))
	if err := sup.Freeze("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	awaitState(t, child.pid, "T")
	if err := sup.Crash("consumer-usage"); err != nil {
		t.Fatal(err)
	}
	ex := expect(t, sup, "Exited", exitOf("consumer-usage"))
	if ex.Signal != "SIGKILL" || ex.Deliberate {
		t.Fatalf("Exited %+v, want SIGKILL, not deliberate", ex)
	}
	awaitGone(t, "frozen child and grandchild", child, grandchild)
}

func TestRestartAndShutdownFrozen(t *testing.T) {
	const grace = 4 * time.Second
	sup := New(Config{RunDir: t.TempDir(), StopTimeout: grace})
	define(t, sup, "producer", "events")
	define(t, sup, "broker", "events")
	if err := sup.Start("producer"); err != nil {
		t.Fatal(err)
	}
	first := expect(t, sup, "Started", func(e Started) bool { return e.Name == "producer" }).PID
	expect(t, sup, "ready", statusOf("producer", status.Started))
	if err := sup.Freeze("producer"); err != nil {
		t.Fatal(err)
	}
	awaitState(t, first, "T")
	start := time.Now()
	if err := sup.Restart("producer"); err != nil {
		t.Fatal(err)
	}
	ex := expect(t, sup, "Exited", exitOf("producer"))
	if ex.PID != first || ex.ExitCode != 0 || !ex.Deliberate {
		t.Fatalf("Exited %+v, want pid %d exit 0", ex, first)
	}
	second := expect(t, sup, "Started again", func(e Started) bool { return e.Name == "producer" }).PID
	if second == first || sup.Frozen("producer") {
		t.Fatalf("restarted pid %d (was %d), Frozen() %v: a new life starts thawed", second, first, sup.Frozen("producer"))
	}
	if took := time.Since(start); took >= grace {
		t.Fatalf("Restart of a frozen process took %v", took)
	}

	// Shutdown with both frozen: each handles its SIGTERM.
	if err := sup.Start("broker"); err != nil {
		t.Fatal(err)
	}
	// The second producer's ready and the broker's events interleave.
	broker, ready := 0, map[string]bool{}
	for broker == 0 || !ready["producer"] || !ready["broker"] {
		switch ev := expect(t, sup, "broker start and readiness", func(ev Event) bool {
			switch e := ev.(type) {
			case Started:
				return e.Name == "broker"
			case Status:
				return e.Event.Type == status.Started
			}
			return false
		}).(type) {
		case Started:
			broker = ev.PID
		case Status:
			ready[ev.Name] = true
		}
	}
	for _, n := range []string{"producer", "broker"} {
		if err := sup.Freeze(n); err != nil {
			t.Fatal(err)
		}
	}
	awaitState(t, second, "T")
	awaitState(t, broker, "T")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start = time.Now()
	if err := sup.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= grace {
		t.Fatalf("Shutdown with frozen children took %v: they waited for SIGKILL", took)
	}
	exits := map[string]Exited{}
	for ev := range sup.Events() {
		if e, ok := ev.(Exited); ok {
			exits[e.Name] = e
		}
	}
	for _, n := range []string{"producer", "broker"} {
		if e := exits[n]; e.ExitCode != 0 || e.Signal != "" || !e.Deliberate {
			t.Errorf("%s Exited %+v, want exit 0 deliberate", n, e)
		}
	}
}

// TestProgramWithPlainStdout: a program of the user's runs in its own
// group; a stdout line shaped like a status event is a log line, never
// an event, and a program that does not exist fails its start by name.
func TestProgramWithPlainStdout(t *testing.T) {
	sup := newTestSupervisor(t, Config{})
	event := `{"event":"started","role":"x","pid":1}`
	if err := sup.Define(Spec{Name: "yours", Program: "sh", Args: []string{"-c", "echo '" + event + "'; echo plain; exec sleep 60"}, PlainStdout: true}); err != nil {
		t.Fatal(err)
	}
	if err := sup.Start("yours"); err != nil {
		t.Fatal(err)
	}
	st := expect(t, sup, "Started", func(e Started) bool { return e.Name == "yours" })
	if pgid, _ := syscall.Getpgid(st.PID); pgid != st.PID {
		t.Fatalf("pgid %d, want its own group %d", pgid, st.PID)
	}
	expect(t, sup, "the event-shaped line as a log line", logLine("yours", "stdout", event))
	expect(t, sup, "plain line", logLine("yours", "stdout", "plain"))
	if err := sup.Crash("yours"); err != nil {
		t.Fatal(err)
	}
	expect(t, sup, "Exited", exitOf("yours"))
	if !strings.Contains(readLog(t, sup, "yours"), "started pid "+strconv.Itoa(st.PID)+": sh -c") {
		t.Fatalf("the log does not name the program:\n%s", readLog(t, sup, "yours"))
	}

	if err := sup.Define(Spec{Name: "missing", Program: "no-such-program-krl"}); err != nil {
		t.Fatal(err)
	}
	err := sup.Start("missing")
	if err == nil || !strings.Contains(err.Error(), "no-such-program-krl") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("start of a missing program: %v", err)
	}
}
