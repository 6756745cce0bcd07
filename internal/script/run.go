package script

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

// Running a script: each line becomes a call the Target carries out, or
// a wait.

// Target is what a script drives: the dashboard's lab, or a fake in
// tests. Every verb but the waits is a call it carries out (Do); the waits
// stay methods of their own because each watches the board for its own
// condition under the line's timeout and changes nothing.
type Target interface {
	action.Doer
	// WaitCaughtUp returns once the consumers have caught up, or ctx's
	// error when ctx ends first.
	WaitCaughtUp(ctx context.Context) error
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
	// WaitDeleted returns once a partition's log start is past
	// consumer-usage's committed offset (retention deleted messages it
	// had not read), or ctx's error.
	WaitDeleted(ctx context.Context) error
	// WaitLastDeleted returns once retention deleted the last message of
	// sensor the audit read, or ctx's error.
	WaitLastDeleted(ctx context.Context, sensor string) error
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
		err := r.do(ctx, a, after)
		if a.Kind == action.Quit {
			return nil // the dashboard ends: nothing after quit runs
		}
		if err != nil {
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

func (r Runner) do(ctx context.Context, a Action, after clock) error {
	v, ok := verbOf(a.Kind)
	if !ok {
		return fmt.Errorf("unknown action kind %q", a.Kind)
	}
	if v.wait != nil {
		return v.wait(ctx, r.Target, a, after)
	}
	res := r.Target.Do(ctx, a.Call())
	if res.Err == nil && a.Kind == action.InjectBad && res.Value != strconv.Itoa(a.Count) {
		return fmt.Errorf("%s of %d malformed records delivered", res.Value, a.Count)
	}
	return res.Err
}

// Call is the action the line asks the Target for.
func (a Action) Call() action.Call {
	c := action.Call{Name: a.Kind, Process: a.Name, Value: a.Value, Count: a.Count, Duration: a.Duration}
	if c.Value == "" {
		v, _ := verbOf(a.Kind)
		c.Value = v.sets
	}
	return c
}

// waitNamed waits, within the line's timeout, for what a target method
// waits for on the line's process; what says what did not happen.
func waitNamed(f func(Target, context.Context, string) error, what string) func(context.Context, Target, Action, clock) error {
	return func(ctx context.Context, t Target, a Action, _ clock) error {
		return within(ctx, a.Duration, func(ctx context.Context) error { return f(t, ctx, a.Name) }, what, a.Name)
	}
}

func runWait(ctx context.Context, _ Target, a Action, after clock) error {
	select {
	case <-after(a.Duration):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runWaitCaughtUp bounds WaitCaughtUp with the runner's clock.
func runWaitCaughtUp(ctx context.Context, t Target, a Action, after clock) error {
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
}

func runWaitISR(ctx context.Context, t Target, a Action, _ clock) error {
	return within(ctx, a.Duration, func(ctx context.Context) error { return t.WaitISR(ctx, a.Count) },
		"not every partition has a leader and %d in-sync replicas", a.Count)
}

func runWaitBalanced(ctx context.Context, t Target, a Action, _ clock) error {
	return within(ctx, a.Duration, t.WaitBalanced, "not every partition is led by its preferred replica")
}

func runWaitDeleted(ctx context.Context, t Target, a Action, _ clock) error {
	return within(ctx, a.Duration, t.WaitDeleted, "no log start is past consumer-usage's committed offset")
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
