package script

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

func TestParseValid(t *testing.T) {
	src := `# a scenario
wait 5s
crash consumer-usage   # the crash
stop producer
start broker
restart store
pause producer
resume producer

wait-caught-up 30s
crash-at consumer-usage after-delta
crash-at consumer-usage after-checkpoint
mode consumer-usage guarded
mode consumer-usage naive
reset consumer-usage earliest
reset consumer-usage latest
	wait   1m30s
start consumer-current
start consumer-query
inject-bad 9
freeze consumer-usage
thaw consumer-usage
scale consumer-usage 3
effect-delay consumer-usage-2 8s
crash consumer-usage-3
effect-delay consumer-usage 0s
wait-held consumer-usage-2 30s
history 3s
quit
history 1000000
rebuild snapshot
`
	got, err := ParseString(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{Kind: action.Wait, Duration: 5 * time.Second, Line: 2},
		{Kind: action.Crash, Name: board.Usage, Line: 3},
		{Kind: action.Stop, Name: board.Producer, Line: 4},
		{Kind: action.Start, Name: board.Broker, Line: 5},
		{Kind: action.Restart, Name: board.Store, Line: 6},
		{Kind: action.Pause, Name: board.Producer, Line: 7},
		{Kind: action.Resume, Name: board.Producer, Line: 8},
		{Kind: action.WaitCaughtUp, Duration: 30 * time.Second, Line: 10},
		{Kind: action.CrashAt, Name: board.Usage, Value: "after-delta", Line: 11},
		{Kind: action.CrashAt, Name: board.Usage, Value: "after-checkpoint", Line: 12},
		{Kind: action.Mode, Name: board.Usage, Value: "guarded", Line: 13},
		{Kind: action.Mode, Name: board.Usage, Value: "naive", Line: 14},
		{Kind: action.Reset, Name: board.Usage, Value: "earliest", Line: 15},
		{Kind: action.Reset, Name: board.Usage, Value: "latest", Line: 16},
		{Kind: action.Wait, Duration: 90 * time.Second, Line: 17},
		{Kind: action.Start, Name: board.Current, Line: 18},
		{Kind: action.Start, Name: board.Query, Line: 19},
		{Kind: action.InjectBad, Count: 9, Line: 20},
		{Kind: action.Freeze, Name: board.Usage, Line: 21},
		{Kind: action.Thaw, Name: board.Usage, Line: 22},
		{Kind: action.Scale, Name: board.Usage, Count: 3, Line: 23},
		{Kind: action.EffectDelay, Name: "consumer-usage-2", Duration: 8 * time.Second, Line: 24},
		{Kind: action.Crash, Name: "consumer-usage-3", Line: 25},
		{Kind: action.EffectDelay, Name: board.Usage, Line: 26},
		{Kind: action.WaitHeld, Name: "consumer-usage-2", Duration: 30 * time.Second, Line: 27},
		{Kind: action.History, Duration: 3 * time.Second, Line: 28},
		{Kind: action.Quit, Line: 29},
		{Kind: action.History, Count: 1000000, Line: 30},
		{Kind: action.Rebuild, Value: "snapshot", Line: 31},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}

	// Round trip: String gives a line Parse turns back into the same action.
	for _, a := range got {
		again, err := ParseString(a.String())
		if err != nil {
			t.Fatalf("%q: %v", a, err)
		}
		a.Line = 1
		if len(again) != 1 || again[0] != a {
			t.Fatalf("%q parsed back as %+v", a, again)
		}
	}
	if s := (Action{Kind: action.Wait, Duration: 1500 * time.Millisecond}).String(); s != "wait 1.5s" {
		t.Errorf("String = %q", s)
	}
	if s := (Action{Kind: action.CrashAt, Name: board.Usage, Value: "after-delta"}).String(); s != "crash-at consumer-usage after-delta" {
		t.Errorf("String = %q", s)
	}
}

func TestParseEmpty(t *testing.T) {
	got, err := ParseString("\n# nothing\n   \n")
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // the whole message after "line 1: "
	}{
		{"jump producer", `unknown action "jump" (want one of wait, crash, stop, start, restart, pause, resume, wait-caught-up, crash-at, mode, reset, reset-lab, inject-bad, history, rebuild, backlog, quit, freeze, thaw, scale, effect-delay, wait-held, wait-down, wait-isr, wait-blocked, wait-leads, wait-balanced, wait-deleted, park, wait-last-deleted, acks, add-partitions, recreate-topic, retention)`},
		{"Crash producer", `unknown action "Crash"`},
		{"crash", `crash: missing process name (want producer, consumer-current, consumer-usage, consumer-usage-2, consumer-usage-3, consumer-query, broker, store, controller, broker-1, broker-2, broker-3, broker-4, broker-5)`},
		{"crash kafka", `crash: unknown process "kafka" (want producer, consumer-current, consumer-usage, consumer-usage-2, consumer-usage-3, consumer-query, broker, store, controller, broker-1, broker-2, broker-3, broker-4, broker-5)`},
		{"crash consumer-usage-4", `crash: unknown process "consumer-usage-4"`},
		{"scale", `scale: missing process name (usage: scale consumer-usage N (N from 1 to 3))`},
		{"scale consumer-usage", `scale consumer-usage: missing value (usage: scale consumer-usage N (N from 1 to 3))`},
		{"scale consumer-usage 4", `scale consumer-usage: bad instance count "4" (want a number from 1 to 3)`},
		{"scale consumer-usage 0", `scale consumer-usage: bad instance count "0"`},
		{"scale consumer-usage two", `scale consumer-usage: bad instance count "two"`},
		{"scale consumer-usage-2 2", `scale: not possible for "consumer-usage-2" (only consumer-usage)`},
		{"scale consumer-usage 2 now", `scale: unexpected "now"`},
		{"effect-delay producer 8s", `effect-delay: not possible for "producer" (only consumer-usage, consumer-usage-2, consumer-usage-3)`},
		{"effect-delay consumer-usage", `effect-delay consumer-usage: missing value (usage: effect-delay consumer-usage|consumer-usage-2|consumer-usage-3 DURATION (0s to 1m))`},
		{"effect-delay consumer-usage 2m", `effect-delay consumer-usage: bad delay "2m" (want a duration from 0s to 1m0s, like 8s)`},
		{"effect-delay consumer-usage -1s", `effect-delay consumer-usage: bad delay "-1s"`},
		{"effect-delay consumer-usage 8", `effect-delay consumer-usage: bad delay "8"`},
		{"wait-held consumer-usage 0s", `wait-held consumer-usage: bad timeout "0s" (want a positive duration like 30s)`},
		{"wait-held producer 5s", `wait-held: not possible for "producer"`},
		{"wait-held consumer-usage", `wait-held consumer-usage: missing value (usage: wait-held consumer-usage|consumer-usage-2|consumer-usage-3 TIMEOUT)`},
		{"stop", `stop: missing process name`},
		{"start nope", `start: unknown process "nope"`},
		{"restart", `restart: missing process name`},
		{"crash producer now", `crash: unexpected "now" (usage: crash NAME)`},
		{"rebuild", `rebuild: missing rebuild strategy (want replay, snapshot, changelog)`},
		{"rebuild compact", `rebuild: unknown rebuild strategy "compact" (want replay, snapshot, changelog)`},
		{"rebuild snapshot now", `rebuild: unexpected "now" (usage: rebuild replay|snapshot|changelog)`},
		{"history 0", `history: bad message count "0" (want a number from 1 to 10000000)`},
		{"history 20000000", `history: bad message count "20000000"`},
		{"history soon", `history: bad duration "soon"`},
		{"pause", `pause: missing process name (want producer)`},
		{"pause consumer-usage", `pause: not possible for consumer-usage (only producer)`},
		{"resume store", `resume: not possible for store (only producer)`},
		{"resume producer please", `resume: unexpected "please" (usage: resume producer)`},
		{"wait", `wait: missing duration (like 5s or 1m30s)`},
		{"wait 5", `wait: bad duration "5" (want a positive duration like 5s or 1m30s)`},
		{"wait five", `wait: bad duration "five"`},
		{"wait -1s", `wait: bad duration "-1s"`},
		{"wait 0s", `wait: bad duration "0s"`},
		{"wait 5s 6s", `wait: unexpected "6s" (usage: wait DURATION)`},
		{"wait-caught-up", `wait-caught-up: missing duration`},
		{"inject-bad", `inject-bad: missing count (like 9: one record of every kind)`},
		{"inject-bad 0", `inject-bad: bad count "0" (want a number from 1 to 10000)`},
		{"inject-bad many", `inject-bad: bad count "many"`},
		{"inject-bad 9 now", `inject-bad: unexpected "now" (usage: inject-bad N)`},
		{"wait-caught-up soon", `wait-caught-up: bad duration "soon"`},
		{"crash-at", `crash-at: missing process name (want consumer-usage)`},
		{"crash-at producer after-delta", `crash-at: not possible for producer (only consumer-usage)`},
		{"crash-at consumer-usage", `crash-at consumer-usage: missing crash point (want after-delta, after-checkpoint, none)`},
		{"crash-at consumer-usage before-delta", `crash-at consumer-usage: unknown crash point "before-delta" (want after-delta, after-checkpoint, none)`},
		{"crash-at consumer-usage after-delta twice", `crash-at: unexpected "twice" (usage: crash-at consumer-usage after-delta|after-checkpoint|none)`},
		{"mode consumer-usage", `mode consumer-usage: missing mode (want naive, guarded)`},
		{"mode consumer-usage safe", `mode consumer-usage: unknown mode "safe" (want naive, guarded)`},
		{"mode consumer-current guarded", `mode: not possible for consumer-current (only consumer-usage)`},
		{"reset consumer-usage", `reset consumer-usage: missing reset (want latest, earliest)`},
		{"reset consumer-usage none", `reset consumer-usage: unknown reset "none" (want latest, earliest)`},
		{"reset", `reset: missing process name (want consumer-usage)`},
		{"quit now", `quit: unexpected "now" (usage: quit)`},
	} {
		t.Run(tc.line, func(t *testing.T) {
			got, err := ParseString(tc.line)
			if err == nil {
				t.Fatalf("parsed as %+v", got)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != 1 || le.Text != tc.line {
				t.Fatalf("error %v (%T), want a *LineError for line 1", err, err)
			}
			if !strings.HasPrefix(err.Error(), "line 1: "+tc.want) {
				t.Fatalf("error\n %q\nwant it to start with\n %q", err, "line 1: "+tc.want)
			}
		})
	}
}

func TestParseReportsEveryBadLine(t *testing.T) {
	_, err := ParseString("wait 5s\ncrash nobody\n# fine\nstart producer\nwait soon\n")
	if err == nil {
		t.Fatal("no error")
	}
	want := "line 2: crash: unknown process \"nobody\" (want producer, consumer-current, consumer-usage, consumer-usage-2, consumer-usage-3, consumer-query, broker, store, controller, broker-1, broker-2, broker-3, broker-4, broker-5)\n" +
		"line 5: wait: bad duration \"soon\" (want a positive duration like 5s or 1m30s)"
	if err.Error() != want {
		t.Fatalf("error\n%s\nwant\n%s", err, want)
	}
}

func TestParseReaderError(t *testing.T) {
	_, err := Parse(strings.NewReader(strings.Repeat("x", 70*1024)))
	if err == nil || !strings.Contains(err.Error(), "line 1:") {
		t.Fatalf("error %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, a := range []Action{
		{},
		{Kind: "fly"},
		{Kind: action.Crash},
		{Kind: action.Crash, Name: "nobody"},
		{Kind: action.Crash, Name: "producer extra"},
		{Kind: action.Wait},
		{Kind: action.Mode, Name: board.Usage, Value: "safe"},
	} {
		if err := a.Validate(); err == nil {
			t.Errorf("%+v validated", a)
		}
	}
	if err := (Action{Kind: action.Pause, Name: board.Producer}).Validate(); err != nil {
		t.Error(err)
	}
}

// fakeTarget records calls; failOn makes one call fail.
type fakeTarget struct {
	mu      sync.Mutex
	calls   []string
	failOn  string
	caughtC chan struct{} // WaitCaughtUp returns when it is closed
}

func (f *fakeTarget) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if call == f.failOn {
		return errors.New("boom")
	}
	return nil
}

func (f *fakeTarget) Crash(n string) error       { return f.record("crash " + n) }
func (f *fakeTarget) Stop(n string) error        { return f.record("stop " + n) }
func (f *fakeTarget) Start(n string) error       { return f.record("start " + n) }
func (f *fakeTarget) Restart(n string) error     { return f.record("restart " + n) }
func (f *fakeTarget) Pause() error               { return f.record("pause") }
func (f *fakeTarget) Resume() error              { return f.record("resume") }
func (f *fakeTarget) ArmCrash(n, p string) error { return f.record("arm " + n + " " + p) }
func (f *fakeTarget) SetMode(n, m string) error  { return f.record("mode " + n + " " + m) }
func (f *fakeTarget) SetReset(n, r string) error { return f.record("reset " + n + " " + r) }
func (f *fakeTarget) Quit()                      { _ = f.record("quit") }
func (f *fakeTarget) ResetLab() error            { return f.record("reset-lab") }
func (f *fakeTarget) Freeze(n string) error      { return f.record("freeze " + n) }
func (f *fakeTarget) Thaw(n string) error        { return f.record("thaw " + n) }
func (f *fakeTarget) Scale(n int) error          { return f.record(fmt.Sprintf("scale %d", n)) }
func (f *fakeTarget) SetEffectDelay(n string, d time.Duration) error {
	return f.record("effect-delay " + n + " " + d.String())
}
func (f *fakeTarget) WaitDown(ctx context.Context, n string) error {
	return f.record("wait-down " + n)
}
func (f *fakeTarget) WaitHeld(ctx context.Context, n string) error {
	return f.record("wait-held " + n)
}
func (f *fakeTarget) InjectBad(n int) (int, error) {
	return n, f.record(fmt.Sprintf("inject-bad %d", n))
}
func (f *fakeTarget) History(ctx context.Context, d time.Duration) error {
	return f.record("history " + d.String())
}
func (f *fakeTarget) GrowHistory(ctx context.Context, n int64) error {
	return f.record(fmt.Sprintf("history %d", n))
}
func (f *fakeTarget) SetRebuild(strategy string) error {
	return f.record("rebuild " + strategy)
}
func (f *fakeTarget) WaitCaughtUp(ctx context.Context) error {
	if err := f.record("wait-caught-up"); err != nil {
		return err
	}
	select {
	case <-f.caughtC:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeTarget) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// fakeClock hands out channels the test fires by hand, and tells it what
// durations were asked for.
type fakeClock struct {
	asked chan time.Duration
	fire  chan chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{asked: make(chan time.Duration, 16), fire: make(chan chan time.Time, 16)}
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.fire <- ch
	c.asked <- d
	return ch
}

// next waits for the runner to ask for a timer, checks its duration and
// returns the function that fires it.
func (c *fakeClock) next(t *testing.T, want time.Duration) func() {
	t.Helper()
	select {
	case d := <-c.asked:
		if d != want {
			t.Fatalf("timer of %v, want %v", d, want)
		}
		ch := <-c.fire
		return func() { ch <- time.Now() }
	case <-time.After(10 * time.Second):
		t.Fatalf("runner never asked for a %v timer", want)
		return nil
	}
}

func mustParse(t *testing.T, src string) []Action {
	t.Helper()
	a, err := ParseString(src)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRunnerCallsTargetInOrder(t *testing.T) {
	target := &fakeTarget{caughtC: make(chan struct{})}
	close(target.caughtC)
	clock := newFakeClock()
	var logged []string
	r := Runner{Target: target, After: clock.After, OnAction: func(a Action) { logged = append(logged, a.String()) }}
	src := `crash consumer-usage
wait 5s
start consumer-usage
pause producer
resume producer
crash-at consumer-usage after-checkpoint
mode consumer-usage guarded
reset consumer-usage earliest
restart consumer-usage
stop broker
wait-caught-up 30s
reset-lab
freeze consumer-current
thaw consumer-current
scale consumer-usage 2
effect-delay consumer-usage-2 1.5s
quit
start producer`
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), mustParse(t, src)) }()

	// The runner has asked for the wait's timer and blocks on it until it
	// fires: read the calls before firing it, not after (the runner may
	// already be past the wait by then).
	fire := clock.next(t, 5*time.Second)
	if calls := target.log(); !reflect.DeepEqual(calls, []string{"crash consumer-usage"}) {
		t.Fatalf("calls during the wait: %v", calls)
	}
	fire()
	clock.next(t, 30*time.Second) // wait-caught-up's timeout: never fires, target answers first
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{
		"crash consumer-usage", "start consumer-usage", "pause", "resume",
		"arm consumer-usage after-checkpoint", "mode consumer-usage guarded",
		"reset consumer-usage earliest", "restart consumer-usage", "stop broker",
		"wait-caught-up", "reset-lab", "freeze consumer-current", "thaw consumer-current",
		"scale 2", "effect-delay consumer-usage-2 1.5s", "quit",
	}
	if calls := target.log(); !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls\n%v\nwant\n%v", calls, want)
	}
	if len(logged) != 17 || logged[1] != "wait 5s" || logged[16] != "quit" {
		t.Fatalf("OnAction saw %v", logged)
	}
}

func TestRunnerStopsAtFirstError(t *testing.T) {
	target := &fakeTarget{failOn: "start consumer-usage"}
	err := Runner{Target: target, After: newFakeClock().After}.Run(context.Background(),
		mustParse(t, "crash consumer-usage\n\nstart consumer-usage\nstop producer"))
	if err == nil || err.Error() != "line 3: start consumer-usage: boom" {
		t.Fatalf("error %v", err)
	}
	if calls := target.log(); len(calls) != 2 {
		t.Fatalf("ran past the error: %v", calls)
	}

	// Actions built in code have no line: the error counts them instead.
	err = Runner{Target: target}.Run(context.Background(), []Action{{Kind: action.Start, Name: board.Usage}})
	if err == nil || err.Error() != "action 1: start consumer-usage: boom" {
		t.Fatalf("error %v", err)
	}
	err = Run(context.Background(), []Action{{Kind: action.Crash, Name: "nobody"}}, target)
	if err == nil || !strings.Contains(err.Error(), `action 1: invalid action "crash nobody"`) {
		t.Fatalf("error %v", err)
	}
}

func TestWaitCaughtUpTimeout(t *testing.T) {
	target := &fakeTarget{caughtC: make(chan struct{})} // never caught up
	clock := newFakeClock()
	done := make(chan error, 1)
	go func() {
		done <- Runner{Target: target, After: clock.After}.Run(context.Background(),
			mustParse(t, "wait-caught-up 30s\nquit"))
	}()
	clock.next(t, 30*time.Second)()
	err := <-done
	if !errors.Is(err, ErrNotCaughtUp) || err.Error() != "line 1: wait-caught-up 30s: not caught up after 30s" {
		t.Fatalf("error %v", err)
	}
	if calls := target.log(); !reflect.DeepEqual(calls, []string{"wait-caught-up"}) {
		t.Fatalf("calls %v (quit must not run after a failure)", calls)
	}
}

func TestRunnerCancel(t *testing.T) {
	for _, src := range []string{"wait 1h\nquit", "wait-caught-up 1h\nquit"} {
		t.Run(src, func(t *testing.T) {
			target := &fakeTarget{caughtC: make(chan struct{})}
			clock := newFakeClock()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- Runner{Target: target, After: clock.After}.Run(ctx, mustParse(t, src)) }()
			clock.next(t, time.Hour)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) || err != context.Canceled {
				t.Fatalf("error %v, want exactly context.Canceled", err)
			}
			if calls := target.log(); fmt.Sprint(calls) == "[quit]" || len(calls) > 1 {
				t.Fatalf("calls %v", calls)
			}
		})
	}
}

func TestRunWithRealClock(t *testing.T) {
	target := &fakeTarget{}
	if err := Run(context.Background(), mustParse(t, "wait 1ms\nstop producer"), target); err != nil {
		t.Fatal(err)
	}
	if calls := target.log(); !reflect.DeepEqual(calls, []string{"stop producer"}) {
		t.Fatalf("calls %v", calls)
	}
}

func (f *fakeTarget) WaitISR(ctx context.Context, n int) error                 { return nil }
func (f *fakeTarget) WaitBlocked(ctx context.Context, name string) error       { return nil }
func (f *fakeTarget) WaitLeads(ctx context.Context, name string) error         { return nil }
func (f *fakeTarget) WaitBalanced(ctx context.Context) error                   { return nil }
func (f *fakeTarget) WaitDeleted(ctx context.Context) error                    { return nil }
func (f *fakeTarget) WaitLastDeleted(ctx context.Context, sensor string) error { return nil }
func (f *fakeTarget) SetAcks(acks string) error                                { return f.record("acks " + acks) }

// TestAcks: acks takes all or 1, prints back, and reaches the target.
func TestAcks(t *testing.T) {
	for _, line := range []string{"acks 1", "acks all", "acks 0"} {
		as, err := ParseString(line)
		if err != nil || len(as) != 1 || as[0].String() != line {
			t.Fatalf("%q: %v %v", line, as, err)
		}
		target := &fakeTarget{}
		if err := Run(context.Background(), as, target); err != nil {
			t.Fatal(err)
		}
		if calls := target.log(); !reflect.DeepEqual(calls, []string{line}) {
			t.Fatalf("calls %v", calls)
		}
	}
	for line, want := range map[string]string{
		"acks":            "missing acks setting",
		"acks 2":          `unknown acks setting "2"`,
		"acks producer 1": `unknown acks setting "producer"`,
		"acks 1 all":      "unexpected",
	} {
		if _, err := ParseString(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}

// TestClusterWaits: the cluster's waits parse and print back, and name only
// what they can wait for.
func TestClusterWaits(t *testing.T) {
	for _, line := range []string{"wait-isr 2 1m0s", "wait-blocked producer 30s", "wait-leads broker-2 1m0s", "wait-balanced 1m0s"} {
		as, err := ParseString(line)
		if err != nil || len(as) != 1 || as[0].String() != line {
			t.Errorf("%q: %v %v", line, as, err)
		}
	}
	for line, want := range map[string]string{
		"wait-isr 0 10s":            "bad count",
		"wait-isr 2":                "want a count and a timeout",
		"wait-leads producer 10s":   "not possible for",
		"wait-leads broker-9 10s":   "not possible for",
		"wait-blocked broker-1 10s": "not possible for",
	} {
		if _, err := ParseString(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", line, err, want)
		}
	}
}

// Run runs actions in order with time.After as the clock.
func Run(ctx context.Context, actions []Action, t Target) error {
	return Runner{Target: t}.Run(ctx, actions)
}

// TestEveryVerbHasAHandler: the language has a verb for every action of
// the registry the script has, each with its grammar, and no verb the
// registry does not know (the handlers are the lab's: lab's
// TestEveryCallHasAHandler).
func TestEveryVerbHasAHandler(t *testing.T) {
	for _, a := range action.All() {
		if _, ok := verbs[a.Name]; ok != a.Script {
			t.Errorf("%s: script %v, verb %v", a.Name, a.Script, ok)
		}
	}
	for _, v := range language {
		if a, ok := action.Lookup(v.name); !ok || !a.Script || v.parse == nil {
			t.Errorf("verb %q: not a script action of the registry, or incomplete", v.name)
		}
	}
	if len(verbs) != len(language) {
		t.Errorf("a verb twice in the language")
	}
}
