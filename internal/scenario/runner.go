package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/script"
)

// Host is what a scenario drives and reads: the dashboard's lab. Its
// actions are the calls a key makes (script.Target's Do), so the board
// shows them as requests first, exactly like a key press.
type Host interface {
	script.Target
	// Observe runs f on the dashboard's board; f must not keep it.
	Observe(f func(*board.Board))
	// Note adds a line to the dashboard's timeline.
	Note(text string)
}

// Runner plays scenarios against a Host.
type Runner struct {
	Host Host
	// Interactive: a presenter is at the keyboard, so Press steps wait for
	// the key's effect instead of performing it.
	Interactive bool
	// OnProgress, if set, receives the narration state at every change
	// (called from the runner's goroutine).
	OnProgress func(Progress)
	// Poll is how often conditions are read from the board (default 100 ms).
	Poll time.Duration
}

// errNotReady: the host has no board yet (the stack was not launched).
var errNotReady = errors.New("the dashboard has no board yet")

// refusal: the scenario cannot run on this lab as it is; said before the
// run changes anything.
type refusal struct{ why string }

func (r refusal) Error() string { return r.why }

// errStopped: the run was cancelled (the presenter stopped it, or the
// dashboard is quitting).
var errStopped = errors.New("stopped before the end")

type run struct {
	r       Runner
	sc      Scenario
	marks   Marks
	results []CheckResult
	prog    Progress
	err     error
	// start and performed: when the run began, and every action it
	// performed since (Result.Performed).
	start     time.Time
	performed []Performed
}

// Run plays sc to the end (or until ctx ends or a step fails) and returns
// its result. It never returns early without evaluating every check: a
// check whose marks were not taken fails as "not measured".
func (r Runner) Run(ctx context.Context, sc Scenario) Result {
	if r.Poll <= 0 {
		r.Poll = 100 * time.Millisecond
	}
	start := time.Now()
	x := &run{r: r, sc: sc, marks: Marks{}, start: start}
	x.results = make([]CheckResult, len(sc.Checks))
	for i, c := range sc.Checks {
		x.results[i] = CheckResult{What: c.What, Pending: true, Observed: "not measured yet"}
	}
	x.prog = Progress{Name: sc.Name, Title: sc.Title, Article: sc.Article, Panel: sc.Panel, Steps: len(sc.Steps)}
	r.Host.Note(fmt.Sprintf("scenario %s started: %s", sc.Name, sc.Title))

	x.playSteps(ctx)
	var refused refusal
	notRun := errors.As(x.err, &refused)
	if x.err != nil && !notRun {
		x.cleanUp()
	}
	x.evaluate(true)
	res := x.result(time.Since(start), notRun)
	r.Host.Note(res.note())
	x.prog.Done, x.prog.Passed, x.prog.Err, x.prog.NotRun = true, res.Passed, res.Error, notRun
	x.prog.Press, x.prog.Waiting = nil, ""
	x.report()
	return res
}

// playSteps gets the stack ready and plays the steps until one fails.
func (x *run) playSteps(ctx context.Context) {
	sc := x.sc
	x.err = x.prepare(ctx)
	for i := 0; x.err == nil && i < len(sc.Steps); i++ {
		if err := x.step(ctx, i); err != nil {
			if errors.Is(err, context.Canceled) {
				err = errStopped
			}
			x.err = fmt.Errorf("step %d/%d (%s): %w", i+1, len(sc.Steps), sc.Steps[i].Title, err)
		}
	}
	if errors.Is(x.err, context.Canceled) {
		x.err = fmt.Errorf("getting the stack ready: %w", errStopped)
	}
}

// cleanUp runs the cleanup script of a run that stopped early.
func (x *run) cleanUp() {
	cleanup := x.cleanup()
	if cleanup == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := x.do(cctx, cleanup); err != nil {
		x.r.Host.Note(fmt.Sprintf("scenario %s: cleanup failed: %v", x.sc.Name, err))
	}
}

// result is the run's result once its checks are evaluated.
func (x *run) result(took time.Duration, notRun bool) Result {
	res := Result{Name: x.sc.Name, Title: x.sc.Title, Checks: x.results, Seconds: took.Seconds(), NotRun: notRun,
		Performed: x.performed}
	res.Passed = x.err == nil && len(x.results) > 0
	for _, c := range x.results {
		res.Passed = res.Passed && c.Passed
	}
	if x.err != nil {
		res.Error = x.err.Error()
	}
	return res
}

// note is the line the run ends with on the timeline.
func (res Result) note() string {
	if res.NotRun {
		return fmt.Sprintf("scenario %s cannot run here: %s", res.Name, res.Error)
	}
	passed := 0
	for _, c := range res.Checks {
		if c.Passed {
			passed++
		}
	}
	verdict := "PASSED"
	if !res.Passed {
		verdict = "FAILED"
	}
	note := fmt.Sprintf("scenario %s %s: %d/%d checks passed in %.1f s", res.Name, verdict, passed, len(res.Checks), res.Seconds)
	if res.Error != "" {
		note += " (" + res.Error + ")"
	}
	return note
}

// cleanup is the script the run ends with when it stops early.
func (x *run) cleanup() string {
	if x.sc.CleanupFrom == nil {
		return x.sc.Cleanup
	}
	o, err := x.observe()
	if err != nil {
		return x.sc.Cleanup
	}
	return x.sc.CleanupFrom(o)
}

func (x *run) report() {
	if x.r.OnProgress == nil {
		return
	}
	p := x.prog
	p.Checks = append([]CheckResult(nil), x.results...)
	x.r.OnProgress(p)
}

// prepare brings the stack to the state the lesson starts from: every
// consumer and the producer running and publishing, consumer-usage in the
// scenario's mode and reset, everything caught up.
func (x *run) prepare(ctx context.Context) error {
	x.prog.StepTitle = "Getting the stack ready"
	x.prog.Say = x.sc.Article
	x.prog.Watch = "The processes start (or restart) and the panels fill."
	o, err := x.observe()
	if err != nil {
		return err
	}
	names := []string{board.Producer, board.Current, board.Usage, board.Query}
	for i := 1; i <= x.sc.Brokers; i++ {
		b := board.ClusterBroker(i)
		if _, ok := o.Procs[b]; !ok {
			return fmt.Errorf("scenario %s needs a cluster of %d brokers: run the dashboard with --cluster %d (see README)",
				x.sc.Name, x.sc.Brokers, x.sc.Brokers)
		}
		names = append(names, b)
	}
	if x.sc.OwnBroker {
		own := ownBrokers(o)
		if len(own) == 0 {
			return errNoOwnBroker
		}
		names = append(names, own...)
	}
	// Before anything changes: a refused lesson leaves the lab as it was.
	if err := x.sc.retentionFits(o.OffsetsRetention); err != nil {
		return err
	}
	if err := x.fitsReplay(); err != nil {
		return err
	}
	acts := x.preparing(o, names)
	x.prog.Waiting = stackReady.What
	if x.sc.Baseline {
		x.prog.Waiting = "a new baseline (reset-lab): usage records cleared, drift starts at exactly 0"
	}
	x.report()
	if len(acts) > 0 {
		if err := x.do(ctx, strings.Join(acts, "\n")); err != nil {
			return fmt.Errorf("preparing the stack: %w", err)
		}
	}
	if err := x.waitFor(ctx, stackReady, time.Second, DefaultTimeout); err != nil {
		return fmt.Errorf("preparing the stack: %w", err)
	}
	return nil
}

// preparing is the script actions that bring the stack to the scenario's
// start: the processes that ended started, the producer publishing, and
// consumer-usage and consumer-current in the scenario's configuration.
func (x *run) preparing(o Observation, names []string) []string {
	var acts []string
	for _, n := range names {
		// Only what ended (crashed or stopped): a process the board has
		// not seen start yet is on its way.
		if p, ok := o.Procs[n]; ok && !p.Alive && p.LastExit != nil && p.Pending == "" {
			acts = append(acts, "start "+n)
		}
	}
	if p := o.Proc(board.Producer); p.Alive && p.Producer.Paused {
		acts = append(acts, "resume producer")
	}
	// Reset first: switching the mode while the reset is earliest would
	// replay the whole topic once more for nothing.
	if x.sc.UsageReset != "" && x.sc.UsageReset != o.UsageReset {
		acts = append(acts, "reset "+board.Usage+" "+x.sc.UsageReset)
	}
	if x.sc.UsageMode != "" && x.sc.UsageMode != o.UsageMode {
		acts = append(acts, "mode "+board.Usage+" "+x.sc.UsageMode)
	}
	if x.sc.Rebuild != "" && x.sc.Rebuild != o.Rebuild {
		acts = append(acts, "rebuild "+x.sc.Rebuild)
	}
	if x.sc.Baseline {
		x.r.Host.Note(fmt.Sprintf("scenario %s starts from a new baseline (reset-lab): usage records and checkpoints "+
			"cleared, consumer-usage reads on from the end of the topic, so every drift it shows comes from this lesson", x.sc.Name))
		acts = append(acts, string(action.ResetLab))
	}
	return acts
}

// fitsReplay refuses a scenario whose replay the topic is too long for.
func (x *run) fitsReplay() error {
	if x.sc.MaxReplay == 0 {
		return nil
	}
	o, err := x.observe()
	if err != nil {
		return err
	}
	if n := o.HWMSum(); n > x.sc.MaxReplay {
		return refusal{fmt.Sprintf("the topic holds %s messages (a replay lesson's history stays in it): replaying them "+
			"through the store would take longer than this lesson's %s, so %s needs a topic of at most %s; "+
			"play it before replay, or in a new lab. Nothing was changed", board.Count(n), replayTimeout, x.sc.Name, board.Count(x.sc.MaxReplay))}
	}
	return nil
}

func (x *run) step(ctx context.Context, i int) error {
	s := x.sc.Steps[i]
	x.prog.Step, x.prog.StepTitle, x.prog.Say, x.prog.Watch = i+1, s.Title, s.Say, s.Watch
	// A step's event often ends it (its Until), so the next step keeps it
	// in view until its own comes.
	x.prog.PrevEvent, x.prog.PrevAt = "", time.Time{}
	if i > 0 && x.sc.Steps[i-1].Event != "" {
		x.prog.PrevEvent, x.prog.PrevAt = x.prog.Event, x.prog.StepAt
	}
	x.prog.Event, x.prog.StepAt = s.Event, time.Now()
	x.prog.Press, x.prog.Waiting = nil, ""
	x.report()
	x.r.Host.Note(fmt.Sprintf("scenario %s · step %d/%d: %s", x.sc.Name, i+1, len(x.sc.Steps), s.Title))
	then, err := x.act(ctx, s)
	if err != nil {
		return err
	}
	if s.Press != nil {
		if err := x.press(ctx, *s.Press); err != nil {
			return err
		}
	}
	if s.Hold > 0 {
		x.prog.Waiting = fmt.Sprintf("watching for %s", s.Hold)
		x.prog.HoldUntil = time.Now().Add(s.Hold)
		x.report()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.Hold):
		}
		x.prog.HoldUntil = time.Time{}
	}
	if err := x.until(ctx, s); err != nil {
		return err
	}
	if then != "" {
		label := "acting: "
		if strings.HasPrefix(then, "pause producer") {
			label = "measuring: " // measure: a quiet moment to measure in
		}
		x.prog.Waiting = label + strings.ReplaceAll(then, "\n", ", ")
		x.report()
		if err := x.do(ctx, then); err != nil {
			return err
		}
	}
	x.prog.Waiting = ""
	if s.Tell != nil {
		o, err := x.observe()
		if err != nil {
			return err
		}
		x.r.Host.Note(fmt.Sprintf("scenario %s: %s", x.sc.Name, s.Tell(o)))
	}
	if s.Mark != "" {
		o, err := x.observe()
		if err != nil {
			return err
		}
		x.marks[s.Mark] = o
		x.evaluate(false)
	}
	x.report()
	return nil
}

// until waits for the step's Until, if it has one. A step that ends
// anyway ends at its timeout too: what it waited for is judged by the
// checks.
func (x *run) until(ctx context.Context, s Step) error {
	if s.Until == nil {
		return nil
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	x.prog.Waiting = s.Until.What
	x.report()
	err := x.waitFor(ctx, s.Until, s.Stable, timeout)
	if err != nil && s.EndsAnyway && ctx.Err() == nil {
		x.r.Host.Note(fmt.Sprintf("scenario %s: %v; the checks judge it as it is", x.sc.Name, err))
		return nil
	}
	return err
}

// act performs the step's Do, or what its From writes, and returns the
// Then to perform once its Until holds.
func (x *run) act(ctx context.Context, s Step) (then string, err error) {
	do, then := s.Do, s.Then
	if s.From != nil {
		o, err := x.observe()
		if err != nil {
			return "", err
		}
		d, t, err := s.From(o)
		if err != nil {
			return "", err
		}
		do, then = cmp.Or(d, do), cmp.Or(t, then)
	}
	if do != "" {
		x.prog.Waiting = "acting: " + strings.ReplaceAll(do, "\n", ", ")
		x.report()
		if err := x.do(ctx, do); err != nil {
			return "", err
		}
	}
	return then, nil
}

// do plays script actions against the host, noting each on the timeline.
func (x *run) do(ctx context.Context, text string) error {
	actions, err := script.ParseString(text)
	if err != nil {
		return err
	}
	sr := script.Runner{
		Target: x.r.Host,
		OnAction: func(a script.Action) {
			x.performed = append(x.performed, Performed{Seconds: time.Since(x.start).Seconds(), Action: a.String()})
			x.r.Host.Note(fmt.Sprintf("scenario %s: %s", x.sc.Name, a))
		},
	}
	return sr.Run(ctx, actions)
}

// press asks the presenter for a key (interactive) or does what the key
// does (headless), then waits for its effect on the board.
func (x *run) press(ctx context.Context, p Press) error {
	base, err := x.observe()
	if err != nil {
		return err
	}
	effect := &Cond{What: p.KeyHint(), Holds: func(o Observation) bool { return pressDone(p, base, o) }}
	timeout := DefaultTimeout
	if x.r.Interactive {
		x.prog.Press = &p
		x.prog.Waiting = "your turn: " + p.KeyHint()
		x.report()
		timeout = 0 // a presenter takes the time they need
	} else {
		if err := x.doKey(p, base); err != nil {
			return fmt.Errorf("%s: %w", p.KeyHint(), err)
		}
		x.prog.Waiting = p.KeyHint()
		x.report()
	}
	err = x.waitFor(ctx, effect, 0, timeout)
	x.prog.Press = nil
	return err
}

// doKey performs what the key does on the dashboard, for a headless run.
func (x *run) doKey(p Press, base Observation) error {
	r, ok := presses[p.Action]
	if !ok {
		return fmt.Errorf("no headless action for %s", p.Action)
	}
	return x.r.Host.Do(context.Background(), r.call(p, base)).Err
}

// waitFor polls the board until c holds continuously for stable. A zero
// timeout waits until ctx ends.
func (x *run) waitFor(ctx context.Context, c *Cond, stable, timeout time.Duration) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(x.r.Poll)
	defer tick.Stop()
	var since time.Time
	for {
		o, err := x.observe()
		if err == nil && c.Holds(o) {
			if since.IsZero() {
				since = time.Now()
			}
			if time.Since(since) >= stable {
				return nil
			}
		} else {
			since = time.Time{}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("timed out after %s waiting for: %s", timeout, c.What)
		case <-tick.C:
		}
	}
}

func (x *run) observe() (Observation, error) {
	var o Observation
	seen := false
	x.r.Host.Observe(func(b *board.Board) { o, seen = Capture(b), true })
	if !seen {
		return o, errNotReady
	}
	return o, nil
}

// unmeasured says why a check's marks were never taken; the run's error is
// said once, in the result, not in every check.
func (x *run) unmeasured(missing []string) string {
	if errors.As(x.err, new(refusal)) {
		return "not run: the scenario could not start here (its error says why)"
	}
	marks := "its mark " + strconv.Quote(missing[0]) + " was"
	if len(missing) > 1 {
		q := make([]string, len(missing))
		for i, m := range missing {
			q[i] = strconv.Quote(m)
		}
		marks = "its marks " + strings.Join(q, ", ") + " were"
	}
	if x.err != nil {
		return "not measured: the run stopped before " + marks + " taken"
	}
	return "not measured: the run ended before " + marks + " taken"
}

// evaluate runs every pending check whose marks exist; at the end (final)
// the others fail as not measured.
func (x *run) evaluate(final bool) {
	for i, c := range x.sc.Checks {
		if !x.results[i].Pending {
			continue
		}
		var missing []string
		for _, n := range c.Needs {
			if _, ok := x.marks[n]; !ok {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			if final {
				x.results[i] = CheckResult{What: c.What, Observed: x.unmeasured(missing)}
				if !errors.As(x.err, new(refusal)) {
					x.r.Host.Note(fmt.Sprintf("scenario %s check ✗ %s: %s", x.sc.Name, c.What, x.results[i].Observed))
				}
			}
			continue
		}
		ok, obs := c.Eval(x.marks)
		x.results[i] = CheckResult{What: c.What, Passed: ok, Observed: obs}
		sym := "✓"
		if !ok {
			sym = "✗"
		}
		x.r.Host.Note(fmt.Sprintf("scenario %s check %s %s: %s", x.sc.Name, sym, c.What, obs))
	}
}
