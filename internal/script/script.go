// Package script is the action language of --script files, workshop
// scenarios and tests: one action per line, run in order against the
// dashboard (a Target).
//
//	# comments and blank lines are ignored; so is anything after '#'
//	wait 5s                               pause the script
//	crash NAME                            SIGKILL the process group
//	stop NAME                             SIGTERM, then SIGKILL after the timeout
//	start NAME
//	restart NAME
//	pause producer                        SIGUSR1: stop publishing
//	resume producer                       SIGUSR2
//	wait-caught-up 30s                    wait until the consumers caught up; fail after 30s
//	freeze NAME                           SIGSTOP the process group (a hung process)
//	thaw NAME                             SIGCONT it
//	crash-at consumer-usage after-delta   arm a crash point (after-checkpoint; none disarms)
//	reset-lab                             a new baseline: usage records and checkpoints cleared
//	inject-bad 9                          the producer publishes 9 malformed records, every kind in turn
//	mode consumer-usage guarded           naive|guarded, from the next start
//	reset consumer-usage earliest         latest|earliest, from the next start
//	scale consumer-usage 3                run 1–3 instances of consumer-usage in its group
//	effect-delay consumer-usage-2 8s      hold each of that instance's usage writes 8s (0..1m; 0 = none)
//	scale consumer-usage 2                1 to 3 instances of consumer-usage in one group
//	effect-delay consumer-usage 8s        hold each usage write of that instance 8s (0s: none)
//	wait-held consumer-usage 30s          wait until that instance holds a usage write; fail after 30s
//	wait-down consumer-usage 60s          wait until the process is down (an armed crash point fired); fail after 60s
//	wait-isr 2 60s                        wait until every partition has a leader and exactly 2 in-sync replicas (--cluster)
//	wait-blocked producer 60s             wait until the producer reports its records unacknowledged (blocked)
//	wait-leads broker-2 60s               wait until that broker leads a partition of the topic (--cluster)
//	wait-balanced 60s                     wait until every partition is led by its preferred (first) replica (--cluster)
//	quit                                  end the dashboard
//
// NAME is one of producer, consumer-current, consumer-usage, consumer-query,
// broker, store, or a scaled instance of consumer-usage (consumer-usage-2,
// consumer-usage-3; the action fails while that instance is not shown), or
// with --cluster N controller and broker-1..broker-N.
package script

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// The names and values a script may use are the board's process names and
// the lesson's words.
var (
	processes   = append(slices.Insert(slices.Clone(board.Canonical), slices.Index(board.Canonical, board.Usage)+1, board.UsageInstanceNames()[1:]...), board.ClusterNames()...)
	instances   = board.UsageInstanceNames()
	crashPoints = lesson.Words(append(slices.Clone(lesson.CrashPoints), lesson.NoCrashPoint))
	modes       = lesson.Words(lesson.Modes)
	resets      = lesson.Words(lesson.Resets)
)

// Kind is an action's verb, exactly as written in a script.
type Kind string

const (
	Wait         Kind = "wait"
	Crash        Kind = "crash"
	Stop         Kind = "stop"
	Start        Kind = "start"
	Restart      Kind = "restart"
	Pause        Kind = "pause"
	Resume       Kind = "resume"
	WaitCaughtUp Kind = "wait-caught-up"
	CrashAt      Kind = "crash-at"
	Mode         Kind = "mode"
	Reset        Kind = "reset"
	ResetLab     Kind = "reset-lab"
	InjectBad    Kind = "inject-bad"
	Quit         Kind = "quit"
	Freeze       Kind = "freeze"
	Thaw         Kind = "thaw"
	Scale        Kind = "scale"
	EffectDelay  Kind = "effect-delay"
	WaitHeld     Kind = "wait-held"
	WaitDown     Kind = "wait-down"
	WaitISR      Kind = "wait-isr"
	WaitBlocked  Kind = "wait-blocked"
	WaitLeads    Kind = "wait-leads"
	WaitBalanced Kind = "wait-balanced"
)

// MaxEffectDelay bounds effect-delay (consumer-usage's own limit).
const MaxEffectDelay = time.Minute

// Action is one parsed line.
type Action struct {
	Kind Kind
	// Name is the process (every kind but wait, wait-caught-up and quit).
	Name string
	// Value is the crash point, mode or reset (crash-at, mode, reset).
	Value string
	// Duration of wait and wait-caught-up; the delay of effect-delay.
	Duration time.Duration
	// Count of inject-bad; the number of instances of scale.
	Count int
	// Line is the 1-based line in the source; 0 for actions built in code.
	Line int
}

// String is the action in script syntax: Parse(a.String()) gives a back
// (Line aside).
func (a Action) String() string {
	switch a.Kind {
	case Wait, WaitCaughtUp, WaitBalanced:
		return string(a.Kind) + " " + a.Duration.String()
	case Quit, ResetLab:
		return string(a.Kind)
	case InjectBad:
		return fmt.Sprintf("%s %d", a.Kind, a.Count)
	case Scale:
		return fmt.Sprintf("%s %s %d", a.Kind, a.Name, a.Count)
	case EffectDelay, WaitHeld, WaitDown, WaitBlocked, WaitLeads:
		return fmt.Sprintf("%s %s %s", a.Kind, a.Name, a.Duration)
	case WaitISR:
		return fmt.Sprintf("%s %d %s", a.Kind, a.Count, a.Duration)
	case CrashAt, Mode, Reset:
		return string(a.Kind) + " " + a.Name + " " + a.Value
	default:
		return string(a.Kind) + " " + a.Name
	}
}

// Validate checks an action built in code against the same rules as Parse.
func (a Action) Validate() error {
	b, msg := parseLine(strings.Fields(a.String()))
	if msg == "" && (b.Kind != a.Kind || b.Name != a.Name || b.Value != a.Value || b.Duration != a.Duration || b.Count != a.Count) {
		msg = "not a well-formed action"
	}
	if msg != "" {
		return fmt.Errorf("invalid action %q: %s", a.String(), msg)
	}
	return nil
}

// grammar says what follows each verb.
type grammar struct {
	duration bool     // one duration
	count    bool     // one count from 1 to MaxInjectBad
	names    []string // one process name among these (nil: none)
	values   []string // then one value among these (nil: none)
	what     string   // "crash point", "mode", "reset" for messages
}

var grammars = map[Kind]grammar{
	Wait:         {duration: true},
	WaitCaughtUp: {duration: true},
	Crash:        {names: processes},
	Stop:         {names: processes},
	Start:        {names: processes},
	Restart:      {names: processes},
	Pause:        {names: []string{board.Producer}},
	Resume:       {names: []string{board.Producer}},
	CrashAt:      {names: []string{board.Usage}, values: crashPoints, what: "crash point"},
	Mode:         {names: []string{board.Usage}, values: modes, what: "mode"},
	Reset:        {names: []string{board.Usage}, values: resets, what: "reset"},
	ResetLab:     {},
	InjectBad:    {count: true},
	Quit:         {},
	Freeze:       {names: processes},
	Thaw:         {names: processes},
	// scale, effect-delay and wait-held are parsed by parseInstanceAction.
	Scale:       {names: []string{board.Usage}},
	EffectDelay: {names: instances},
	WaitHeld:    {names: instances},
	WaitDown:    {names: processes},
	WaitBlocked: {names: []string{board.Producer}},
	WaitLeads:   {names: clusterBrokers()},
	WaitISR:     {},
	// wait-balanced: after a restart the controller hands leadership back
	// within its rebalance interval.
	WaitBalanced: {duration: true},
}

var kinds = []Kind{Wait, Crash, Stop, Start, Restart, Pause, Resume, WaitCaughtUp, CrashAt, Mode, Reset, ResetLab, InjectBad, Quit, Freeze, Thaw, Scale, EffectDelay, WaitHeld, WaitDown, WaitISR, WaitBlocked, WaitLeads, WaitBalanced}

// clusterBrokers are the names of the brokers --cluster may run.
func clusterBrokers() []string {
	var out []string
	for _, n := range board.ClusterNames() {
		if _, ok := board.ClusterBrokerNumber(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// MaxInjectBad bounds inject-bad (the producer's own limit).
const MaxInjectBad = 10000

// LineError is a mistake on one line of a script.
type LineError struct {
	Line int
	Text string // the line as written, trimmed
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads a script. On mistakes it returns every bad line's *LineError
// (errors.Join), in line order, and no actions.
func Parse(r io.Reader) ([]Action, error) {
	var actions []Action
	var errs []error
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		a, msg := parseLine(strings.Fields(text))
		if msg != "" {
			errs = append(errs, &LineError{Line: n, Text: text, Msg: msg})
			continue
		}
		a.Line = n
		actions = append(actions, a)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("line %d: %w", n+1, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return actions, nil
}

// ParseString is Parse of a string (scenarios and tests).
func ParseString(s string) ([]Action, error) { return Parse(strings.NewReader(s)) }

// parseLine returns the action, or a message saying what is wrong.
func parseLine(f []string) (Action, string) {
	if len(f) == 0 {
		return Action{}, "empty action"
	}
	kind := Kind(f[0])
	g, ok := grammars[kind]
	if !ok {
		return Action{}, fmt.Sprintf("unknown action %q (want one of %s)", f[0], join(kinds))
	}
	a := Action{Kind: kind}
	args := f[1:]
	want := 0
	switch {
	case kind == Scale || kind == EffectDelay || kind == WaitHeld || kind == WaitDown || kind == WaitBlocked || kind == WaitLeads:
		return parseInstanceAction(a, g, args)
	case kind == WaitISR:
		return parseWaitISR(a, args)
	case g.duration:
		want = 1
		if len(args) == 0 {
			return a, fmt.Sprintf("%s: missing duration (like 5s or 1m30s)", kind)
		}
		d, err := time.ParseDuration(args[0])
		if err != nil || d <= 0 {
			return a, fmt.Sprintf("%s: bad duration %q (want a positive duration like 5s or 1m30s)", kind, args[0])
		}
		a.Duration = d
	case g.count:
		want = 1
		if len(args) == 0 {
			return a, fmt.Sprintf("%s: missing count (like 9: one record of every kind)", kind)
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > MaxInjectBad {
			return a, fmt.Sprintf("%s: bad count %q (want a number from 1 to %d)", kind, args[0], MaxInjectBad)
		}
		a.Count = n
	case g.names != nil:
		want = 1
		if len(args) == 0 {
			return a, fmt.Sprintf("%s: missing process name (want %s)", kind, join(g.names))
		}
		if !slices.Contains(processes, args[0]) {
			return a, fmt.Sprintf("%s: unknown process %q (want %s)", kind, args[0], join(g.names))
		}
		if !slices.Contains(g.names, args[0]) {
			return a, fmt.Sprintf("%s: not possible for %s (only %s)", kind, args[0], join(g.names))
		}
		a.Name = args[0]
		if g.values != nil {
			want = 2
			if len(args) < 2 {
				return a, fmt.Sprintf("%s %s: missing %s (want %s)", kind, a.Name, g.what, join(g.values))
			}
			if !slices.Contains(g.values, args[1]) {
				return a, fmt.Sprintf("%s %s: unknown %s %q (want %s)", kind, a.Name, g.what, args[1], join(g.values))
			}
			a.Value = args[1]
		}
	}
	if len(args) > want {
		return a, fmt.Sprintf("%s: unexpected %q (usage: %s)", kind, strings.Join(args[want:], " "), usage(kind))
	}
	return a, ""
}

// parseInstanceAction parses "scale consumer-usage N" and
// "effect-delay NAME D".
func parseInstanceAction(a Action, g grammar, args []string) (Action, string) {
	kind := a.Kind
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing process name (usage: %s)", kind, usage(kind))
	}
	if !slices.Contains(g.names, args[0]) {
		return a, fmt.Sprintf("%s: not possible for %q (only %s)", kind, args[0], join(g.names))
	}
	a.Name = args[0]
	if len(args) < 2 {
		return a, fmt.Sprintf("%s %s: missing value (usage: %s)", kind, a.Name, usage(kind))
	}
	if len(args) > 2 {
		return a, fmt.Sprintf("%s: unexpected %q (usage: %s)", kind, strings.Join(args[2:], " "), usage(kind))
	}
	if kind == Scale {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > board.MaxUsageInstances {
			return a, fmt.Sprintf("scale %s: bad instance count %q (want a number from 1 to %d)", a.Name, args[1], board.MaxUsageInstances)
		}
		a.Count = n
		return a, ""
	}
	d, err := time.ParseDuration(args[1])
	if kind == WaitHeld || kind == WaitDown || kind == WaitBlocked || kind == WaitLeads {
		if err != nil || d <= 0 {
			return a, fmt.Sprintf("%s %s: bad timeout %q (want a positive duration like 30s)", kind, a.Name, args[1])
		}
		a.Duration = d
		return a, ""
	}
	if err != nil || d < 0 || d > MaxEffectDelay {
		return a, fmt.Sprintf("effect-delay %s: bad delay %q (want a duration from 0s to %s, like 8s)", a.Name, args[1], MaxEffectDelay)
	}
	a.Duration = d
	return a, ""
}

// MaxISR bounds wait-isr's count: --cluster runs at most 5 brokers.
const MaxISR = 5

// parseWaitISR parses "wait-isr N TIMEOUT".
func parseWaitISR(a Action, args []string) (Action, string) {
	if len(args) != 2 {
		return a, fmt.Sprintf("wait-isr: want a count and a timeout (usage: %s)", usage(WaitISR))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxISR {
		return a, fmt.Sprintf("wait-isr: bad count %q (want a number from 1 to %d)", args[0], MaxISR)
	}
	d, err := time.ParseDuration(args[1])
	if err != nil || d <= 0 {
		return a, fmt.Sprintf("wait-isr %d: bad timeout %q (want a positive duration like 60s)", n, args[1])
	}
	a.Count, a.Duration = n, d
	return a, ""
}

func usage(k Kind) string {
	g := grammars[k]
	switch {
	case k == Scale:
		return "scale consumer-usage N (N from 1 to 3)"
	case k == EffectDelay:
		return "effect-delay " + strings.Join(g.names, "|") + " DURATION (0s to 1m)"
	case k == WaitHeld:
		return "wait-held " + strings.Join(g.names, "|") + " TIMEOUT"
	case k == WaitDown:
		return "wait-down NAME TIMEOUT"
	case k == WaitBlocked:
		return "wait-blocked producer TIMEOUT"
	case k == WaitLeads:
		return "wait-leads broker-N TIMEOUT"
	case k == WaitISR:
		return "wait-isr N TIMEOUT"
	case g.duration:
		return string(k) + " DURATION"
	case g.count:
		return string(k) + " N"
	case g.values != nil:
		return string(k) + " " + strings.Join(g.names, "|") + " " + strings.Join(g.values, "|")
	case g.names != nil && len(g.names) == 1:
		return string(k) + " " + g.names[0]
	case g.names != nil:
		return string(k) + " NAME"
	}
	return string(k)
}

func join[S ~string](xs []S) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = string(x)
	}
	return strings.Join(parts, ", ")
}

// Target is what a script drives: the dashboard, or a fake in tests.
type Target interface {
	Crash(name string) error
	Stop(name string) error
	Start(name string) error
	Restart(name string) error
	// Pause and Resume the producer (SIGUSR1 / SIGUSR2).
	Pause() error
	Resume() error
	// ArmCrash arms a crash point in a running process.
	ArmCrash(name, point string) error
	// SetMode and SetReset change how name starts next time.
	SetMode(name, mode string) error
	SetReset(name, reset string) error
	// WaitCaughtUp returns once the consumers have caught up, or ctx's
	// error when ctx ends first.
	WaitCaughtUp(ctx context.Context) error
	// ResetLab starts a new baseline: usage records and checkpoints
	// cleared, consumer-usage reading on from the end of the topic.
	ResetLab() error
	// InjectBad makes the producer publish n malformed records.
	InjectBad(n int) (delivered int, err error)
	// Quit ends the dashboard; the script stops after it.
	Quit()
	// Freeze SIGSTOPs the process group of name; Thaw SIGCONTs it.
	Freeze(name string) error
	Thaw(name string) error
	// Scale runs n (1–3) instances of consumer-usage in its group.
	Scale(n int) error
	// SetEffectDelay makes consumer-usage instance name hold each usage
	// write for d (0: none), now and at its next starts.
	SetEffectDelay(name string, d time.Duration) error
	// WaitHeld returns once consumer-usage instance name holds a usage
	// write (in flight under its effect delay), or ctx's error.
	WaitHeld(ctx context.Context, name string) error
	// WaitDown returns once name is not running (it exited, crashed or
	// was stopped), or ctx's error.
	WaitDown(ctx context.Context, name string) error
	// WaitISR returns once every partition of the topic has a leader and
	// exactly n in-sync replicas, or ctx's error.
	WaitISR(ctx context.Context, n int) error
	// WaitBlocked returns once the producer reports records it cannot get
	// acknowledged, or ctx's error.
	WaitBlocked(ctx context.Context, name string) error
	// WaitLeads returns once broker name leads a partition of the topic,
	// or ctx's error.
	WaitLeads(ctx context.Context, name string) error
	// WaitBalanced returns once every partition of the topic is led by
	// its preferred (first) replica, or ctx's error.
	WaitBalanced(ctx context.Context) error
}

// ErrNotCaughtUp is returned (wrapped) when wait-caught-up times out.
var ErrNotCaughtUp = errors.New("not caught up")

// Runner runs actions against a Target.
type Runner struct {
	Target Target
	// After is the clock of wait and of wait-caught-up's timeout; nil
	// means time.After. Tests inject one they control.
	After func(time.Duration) <-chan time.Time
	// OnAction, if set, is called before each action (the event log).
	OnAction func(Action)
}

// Run runs actions in order with time.After as the clock.
func Run(ctx context.Context, actions []Action, t Target) error {
	return Runner{Target: t}.Run(ctx, actions)
}

// Run runs actions in order. It stops at the first failing action with an
// error naming its line, at quit (returning nil), or when ctx ends
// (returning ctx's error).
func (r Runner) Run(ctx context.Context, actions []Action) error {
	after := r.After
	if after == nil {
		after = time.After
	}
	for i, a := range actions {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.Validate(); err != nil {
			return fmt.Errorf("action %d: %w", i+1, err)
		}
		if r.OnAction != nil {
			r.OnAction(a)
		}
		if a.Kind == Quit {
			r.Target.Quit()
			return nil
		}
		if err := r.do(ctx, a, after); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				return ctxErr
			}
			where := fmt.Sprintf("line %d", a.Line)
			if a.Line == 0 {
				where = fmt.Sprintf("action %d", i+1)
			}
			return fmt.Errorf("%s: %s: %w", where, a, err)
		}
	}
	return nil
}

func (r Runner) do(ctx context.Context, a Action, after func(time.Duration) <-chan time.Time) error {
	t := r.Target
	switch a.Kind {
	case Wait:
		select {
		case <-after(a.Duration):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case WaitCaughtUp:
		waitCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		timedOut := fmt.Errorf("%w after %v", ErrNotCaughtUp, a.Duration)
		stopTimer := make(chan struct{})
		defer close(stopTimer)
		go func() {
			select {
			case <-after(a.Duration):
				cancel(timedOut)
			case <-stopTimer:
			case <-waitCtx.Done():
			}
		}()
		err := t.WaitCaughtUp(waitCtx)
		if err != nil && context.Cause(waitCtx) == timedOut {
			return timedOut
		}
		return err
	case ResetLab:
		return t.ResetLab()
	case InjectBad:
		n, err := t.InjectBad(a.Count)
		if err == nil && n != a.Count {
			err = fmt.Errorf("%d of %d malformed records delivered", n, a.Count)
		}
		return err
	case Crash:
		return t.Crash(a.Name)
	case Stop:
		return t.Stop(a.Name)
	case Start:
		return t.Start(a.Name)
	case Restart:
		return t.Restart(a.Name)
	case Pause:
		return t.Pause()
	case Resume:
		return t.Resume()
	case CrashAt:
		return t.ArmCrash(a.Name, a.Value)
	case Mode:
		return t.SetMode(a.Name, a.Value)
	case Reset:
		return t.SetReset(a.Name, a.Value)
	case Freeze:
		return t.Freeze(a.Name)
	case Thaw:
		return t.Thaw(a.Name)
	case Scale:
		return t.Scale(a.Count)
	case EffectDelay:
		return t.SetEffectDelay(a.Name, a.Duration)
	case WaitHeld:
		return within(ctx, a.Duration, func(ctx context.Context) error { return t.WaitHeld(ctx, a.Name) },
			"%s holds no usage write", a.Name)
	case WaitDown:
		return within(ctx, a.Duration, func(ctx context.Context) error { return t.WaitDown(ctx, a.Name) },
			"%s still running", a.Name)
	case WaitISR:
		return within(ctx, a.Duration, func(ctx context.Context) error { return t.WaitISR(ctx, a.Count) },
			"not every partition has a leader and %d in-sync replicas", a.Count)
	case WaitBlocked:
		return within(ctx, a.Duration, func(ctx context.Context) error { return t.WaitBlocked(ctx, a.Name) },
			"%s not blocked", a.Name)
	case WaitLeads:
		return within(ctx, a.Duration, func(ctx context.Context) error { return t.WaitLeads(ctx, a.Name) },
			"%s leads no partition", a.Name)
	case WaitBalanced:
		return within(ctx, a.Duration, t.WaitBalanced, "not every partition is led by its preferred replica")
	}
	return fmt.Errorf("unknown action kind %q", a.Kind)
}

// within runs wait with timeout; its failure reads "<what> after <timeout>: <cause>".
func within(ctx context.Context, timeout time.Duration, wait func(context.Context) error, what string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := wait(ctx); err != nil {
		return fmt.Errorf("%s after %v: %w", fmt.Sprintf(what, args...), timeout, err)
	}
	return nil
}
