package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/store"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// fakeSup stands in for the supervisor: lifecycle calls report Started and
// Exited events at once, as the real one does after acting.
type fakeSup struct {
	mu      sync.Mutex
	events  chan supervisor.Event
	pids    map[string]int
	args    map[string][]string
	signals []string
	next    int
	frozen  map[string]bool
	// onStart, if set, runs after a process's Started event (its status lines).
	onStart func(name string, pid int)
}

func newFakeSup() *fakeSup {
	return &fakeSup{events: make(chan supervisor.Event, 1024), pids: map[string]int{}, args: map[string][]string{}, next: 100,
		frozen: map[string]bool{}}
}

func (f *fakeSup) Define(spec supervisor.Spec) error { return f.SetArgs(spec.Name, spec.Args) }
func (f *fakeSup) SetArgs(name string, args []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.args[name] = append([]string(nil), args...)
	return nil
}
func (f *fakeSup) Args(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.args[name]
}
func (f *fakeSup) Events() <-chan supervisor.Event { return f.events }
func (f *fakeSup) PID(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pids[name]
}
func (f *fakeSup) Running(name string) bool         { return f.PID(name) != 0 }
func (f *fakeSup) Tail(name string, n int) []string { return nil }
func (f *fakeSup) Start(name string) error {
	f.mu.Lock()
	f.next++
	pid := f.next
	f.pids[name] = pid
	hook := f.onStart
	f.mu.Unlock()
	f.events <- supervisor.Started{Name: name, PID: pid, At: time.Now()}
	if hook != nil {
		hook(name, pid)
	}
	return nil
}
func (f *fakeSup) exit(name string, sig string, deliberate bool) {
	f.mu.Lock()
	pid := f.pids[name]
	delete(f.pids, name)
	delete(f.frozen, name)
	f.mu.Unlock()
	if pid != 0 {
		f.events <- supervisor.Exited{Name: name, PID: pid, At: time.Now(), ExitCode: -1, Signal: sig, Deliberate: deliberate}
	}
}
func (f *fakeSup) Crash(name string) error { f.exit(name, "SIGKILL", false); return nil }
func (f *fakeSup) Stop(name string) error  { f.exit(name, "SIGTERM", true); return nil }
func (f *fakeSup) Restart(name string) error {
	f.exit(name, "SIGTERM", true)
	return f.Start(name)
}
func (f *fakeSup) Signal(name string, sig syscall.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, name+" "+sig.String())
	return nil
}
func (f *fakeSup) Signals() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.signals...)
}
func (f *fakeSup) status(name string, ev status.Event) {
	f.events <- supervisor.Status{Name: name, At: time.Now(), Event: ev}
}
func (f *fakeSup) setFrozen(name string, frozen bool) error {
	f.mu.Lock()
	pid, was := f.pids[name], f.frozen[name]
	if pid != 0 {
		f.frozen[name] = frozen
	}
	f.mu.Unlock()
	if pid == 0 {
		return supervisor.ErrNotRunning
	}
	if was != frozen {
		f.events <- supervisor.Frozen{Name: name, PID: pid, At: time.Now(), Frozen: frozen}
	}
	return nil
}
func (f *fakeSup) Freeze(name string) error { return f.setFrozen(name, true) }
func (f *fakeSup) Thaw(name string) error   { return f.setFrozen(name, false) }
func (f *fakeSup) Frozen(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen[name] && f.pids[name] != 0
}
func (f *fakeSup) KillAll() {}
func (f *fakeSup) Shutdown(context.Context) error {
	close(f.events)
	return nil
}

// testLab is a lab over a fake supervisor whose inputs also feed a second
// board, as the TUI's board is fed.
type testLab struct {
	*Lab
	sup *fakeSup
	wg  sync.WaitGroup

	uiMu    sync.Mutex
	ui      *board.Board
	markers map[string]bool
	nmark   int
}

func newTestLab(t *testing.T) *testLab {
	t.Helper()
	l, err := New(Config{RunDir: t.TempDir(), Brokers: "127.0.0.1:1", Mongo: "mongodb://127.0.0.1:2", Topic: "t",
		UsageMode: "naive", UsageReset: "latest"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeSup()
	l.sup = f
	tl := &testLab{Lab: l, sup: f, ui: l.NewBoard(), markers: map[string]bool{}}
	l.startPump()
	tl.wg.Add(1)
	go func() {
		defer tl.wg.Done()
		for in := range l.Inputs() {
			tl.uiMu.Lock()
			tl.ui.Apply(in)
			if lg, ok := in.(board.ProcLog); ok {
				tl.markers[lg.Line] = true
			}
			tl.uiMu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Shutdown(context.Background())
		tl.wg.Wait()
	})
	for _, name := range roles {
		if err := f.Define(supervisor.Spec{Name: name, Args: l.roleArgs(name)}); err != nil {
			t.Fatal(err)
		}
	}
	return tl
}

// settle waits until everything the supervisor reported so far, and every
// input the lab emitted before, reached the UI board: a marker line goes
// through the supervisor's event stream behind them.
func (tl *testLab) settle(t *testing.T) {
	t.Helper()
	tl.nmark++
	mark := fmt.Sprintf("settle-%d", tl.nmark)
	tl.sup.events <- supervisor.Log{Name: board.Producer, At: time.Now(), Line: mark}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		tl.uiMu.Lock()
		ok := tl.markers[mark]
		tl.uiMu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the UI board never got the inputs")
}

// uiBoard runs f on the UI board.
func (tl *testLab) uiBoard(f func(*board.Board)) {
	tl.uiMu.Lock()
	defer tl.uiMu.Unlock()
	f(tl.ui)
}

// TestOneInputPath: what the lab does reaches its own board and a front
// end's board as the same inputs, so both say the same.
func TestOneInputPath(t *testing.T) {
	tl := newTestLab(t)
	for _, name := range roles {
		if err := tl.Start(name); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.Crash(board.Usage); err != nil {
		t.Fatal(err)
	}
	if err := tl.Restart(board.Current); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.TogglePause(); err != nil {
		t.Fatal(err)
	}
	tl.settle(t)
	mirror, _ := json.Marshal(tl.Report())
	var ui []byte
	var usage board.ProcView
	tl.uiBoard(func(b *board.Board) { ui, _ = json.Marshal(b.Report()); usage = b.Process(board.Usage) })
	if string(mirror) != string(ui) {
		t.Fatalf("the boards disagree:\nlab: %s\nui:  %s", mirror, ui)
	}
	if usage.State != board.Crashed || usage.Crashes != 1 {
		t.Fatalf("usage after Crash: %s, %d crashes", usage.StateLabel, usage.Crashes)
	}
}

// TestCrashReturnsOnceTheBoardHasTheExit: a script's "crash X" then
// "restart X" must not show the crash it asked for as unexpected.
func TestCrashReturnsOnceTheBoardHasTheExit(t *testing.T) {
	tl := newTestLab(t)
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := tl.Crash(board.Usage); err != nil {
			t.Fatal(err)
		}
		var v board.ProcView
		tl.Observe(func(b *board.Board) { v = b.Process(board.Usage) })
		if v.Alive || v.State != board.Crashed {
			t.Fatalf("Crash returned before the board had the exit: %s", v.StateLabel)
		}
		if err := tl.Start(board.Usage); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPauseToggleFollowsTheBoard: the word and the signal come from the
// same fact, and a second press before the producer confirms resumes.
func TestPauseToggleFollowsTheBoard(t *testing.T) {
	tl := newTestLab(t)
	if err := tl.Start(board.Producer); err != nil {
		t.Fatal(err)
	}
	tl.settle(t) // the board has the start (which clears any pause state) before the first press
	p1, err := tl.TogglePause()
	if err != nil || !p1 {
		t.Fatalf("first toggle paused=%v err=%v", p1, err)
	}
	// No Paused status yet (a flush is in progress): the toggle still knows.
	p2, err := tl.TogglePause()
	if err != nil || p2 {
		t.Fatalf("second toggle paused=%v err=%v", p2, err)
	}
	if got, want := tl.sup.Signals(), []string{"producer user defined signal 1", "producer user defined signal 2"}; !slices.Equal(got, want) {
		t.Fatalf("signals %q, want %q", got, want)
	}
	tl.sup.status(board.Producer, status.Event{Type: status.Resumed})
	tl.settle(t)
	p3, _ := tl.TogglePause()
	if !p3 {
		t.Fatal("third toggle did not pause")
	}
}

// TestModeOnStoppedUsageDoesNotStartIt: m on a crashed consumer-usage sets
// what its next start uses, and says so.
func TestModeOnStoppedUsageDoesNotStartIt(t *testing.T) {
	tl := newTestLab(t)
	mode, restarted, err := tl.ToggleUsageMode()
	if err != nil || restarted || mode != string(lesson.Guarded) {
		t.Fatalf("toggle on a stopped consumer-usage: %s restarted=%v err=%v", mode, restarted, err)
	}
	if tl.sup.Running(board.Usage) {
		t.Fatal("m started consumer-usage")
	}
	if args := tl.sup.Args(board.Usage); !slices.Contains(args, "guarded") {
		t.Fatalf("next start's args %q", args)
	}
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
	mode, restarted, err = tl.ToggleUsageMode()
	if err != nil || !restarted || mode != string(lesson.Naive) {
		t.Fatalf("toggle on a running consumer-usage: %s restarted=%v err=%v", mode, restarted, err)
	}
	reset, _, _ := tl.ToggleUsageReset()
	if reset != string(lesson.Earliest) {
		t.Fatalf("reset %s", reset)
	}
	var m, r string
	tl.Observe(func(b *board.Board) { m, r = b.UsageConfig() })
	if m != "naive" || r != "earliest" {
		t.Fatalf("board says %s/%s", m, r)
	}
}

// usageHTTP stands in for consumer-usage's /crash-at: it announces each arm
// on the status stream first, as the real one does. With die set it then
// drops the connection without a reply (the process killed itself).
type usageHTTP struct {
	sup *fakeSup
	die bool
}

func (u *usageHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	point := r.URL.Query().Get("point")
	u.sup.status(board.Usage, status.Event{Type: status.CrashPointArmed, Point: point, After: 1})
	if u.die {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	w.WriteHeader(http.StatusOK)
}

func startUsageWithHTTP(t *testing.T, tl *testLab, h *usageHTTP) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().(*net.TCPAddr).String()
	tl.sup.onStart = func(name string, pid int) {
		if name == board.Usage {
			tl.sup.status(name, status.Event{Type: status.Listening, Endpoint: "http", Addr: addr})
		}
	}
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
}

// TestArmCrashShowsTheLatest: arms one after another (c's choices) leave
// the latest on the board the UI reads.
func TestArmCrashShowsTheLatest(t *testing.T) {
	tl := newTestLab(t)
	startUsageWithHTTP(t, tl, &usageHTTP{sup: tl.sup})
	for _, p := range []lesson.CrashPoint{lesson.AfterDelta, lesson.AfterCheckpoint, lesson.NoCrashPoint, lesson.AfterDelta} {
		if err := tl.ArmCrash(board.Usage, string(p)); err != nil {
			t.Fatal(err)
		}
	}
	tl.settle(t)
	var armed string
	tl.uiBoard(func(b *board.Board) { armed = b.Process(board.Usage).Armed })
	if armed != string(lesson.AfterDelta) {
		t.Fatalf("the UI board shows %q armed", armed)
	}
}

// TestArmAnnouncedThenDied: the reply lost to the crash it armed is not an
// arming error when the process announced the arm.
func TestArmAnnouncedThenDied(t *testing.T) {
	tl := newTestLab(t)
	h := &usageHTTP{sup: tl.sup, die: true}
	startUsageWithHTTP(t, tl, h)
	if err := tl.ArmCrash(board.Usage, string(lesson.AfterCheckpoint)); err != nil {
		t.Fatalf("arm reported an error for an announced arm: %v", err)
	}
	// Without an announcement the lost reply is an error.
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer silent.Close()
	tl.sup.status(board.Usage, status.Event{Type: status.Listening, Endpoint: "http", Addr: silent.Listener.Addr().String()})
	tl.settle(t)
	if err := tl.ArmCrash(board.Usage, string(lesson.AfterDelta)); err == nil {
		t.Fatal("a lost reply without an announcement passed for an arm")
	}
}

// TestResetLab: consumer-usage stops before its records and checkpoints are
// dropped, then starts with reset latest in a group of its own.
func TestResetLab(t *testing.T) {
	tl := newTestLab(t)
	uri := embeddedtest.StartStore(t, "krl_reset_"+strings.ToLower(t.Name()))
	ctx := context.Background()
	db, err := store.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	tl.db = db
	app, err := db.AppendUsage(ctx, store.Summary{}, store.UsageRecord{Usage: telemetry.Usage{SensorID: "s1", DeltaHours: 1.5}, Effect: store.WriteID()})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveCheckpoint(ctx, store.Checkpoint{SensorID: "s1", Summary: app.Summary}); err != nil {
		t.Fatal(err)
	}
	tl.sup.onStart = func(name string, pid int) { // the group it runs with, as a real one says
		tl.sup.status(name, status.Event{Type: status.Started, GroupID: "demo-usage-earliest-0"})
	}
	if _, _, err := tl.ToggleUsageReset(); err != nil { // earliest: the reset must bring latest back
		t.Fatal(err)
	}
	if err := tl.Start(board.Usage); err != nil {
		t.Fatal(err)
	}
	pid := tl.sup.PID(board.Usage)
	if err := tl.Scale(2); err != nil {
		t.Fatal(err)
	}
	pid2 := tl.sup.PID("consumer-usage-2")

	if err := tl.ResetLab(); err != nil {
		t.Fatal(err)
	}
	// Every instance stopped, then started in the new baseline's group.
	if now := tl.sup.PID("consumer-usage-2"); now == 0 || now == pid2 {
		t.Fatalf("consumer-usage-2 pid %d after reset-lab (was %d)", now, pid2)
	}
	if args := strings.Join(tl.sup.Args("consumer-usage-2"), " "); !strings.Contains(args, "--group demo-usage-baseline-1") ||
		!strings.Contains(args, "--instance-id consumer-usage-2") {
		t.Fatalf("consumer-usage-2's args: %s", args)
	}
	if tot, err := db.UsageTotals(ctx); err != nil || len(tot) != 0 {
		t.Fatalf("usage after reset-lab: %v %v", tot, err)
	}
	if cps, err := db.LoadCheckpoints(ctx); err != nil || len(cps) != 0 {
		t.Fatalf("checkpoints after reset-lab: %v %v", cps, err)
	}
	if now := tl.sup.PID(board.Usage); now == 0 || now == pid {
		t.Fatalf("consumer-usage pid %d after reset-lab (was %d): not started again", now, pid)
	}
	args := strings.Join(tl.sup.Args(board.Usage), " ")
	if !strings.Contains(args, "--reset latest") || !strings.Contains(args, "--group demo-usage-baseline-1") {
		t.Fatalf("next start's args: %s", args)
	}
	var exit *board.Exit
	tl.Observe(func(b *board.Board) { exit = b.Process(board.Usage).LastExit })
	if exit == nil || exit.PID != pid || !exit.Deliberate {
		t.Fatalf("consumer-usage was not stopped gracefully first: %+v", exit)
	}
	if err := tl.ResetLab(); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(tl.sup.Args(board.Usage), " "); !strings.Contains(args, "--group demo-usage-baseline-2") {
		t.Fatalf("second baseline's args: %s", args)
	}
}
