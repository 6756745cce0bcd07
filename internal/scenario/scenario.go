// Package scenario holds the guided scenarios of workshops and screencasts:
// short lessons, each tied to a claim of the seed article (the three
// recovery strategies), that the dashboard plays against the real stack.
//
// A scenario is data (catalog.go): a title, narration, steps and checks.
// A step either performs script actions itself (the dashboard acts) or asks
// the presenter to press a key (in a headless run the runner performs what
// the key does), then may hold for a while and wait for a condition of the
// board; when it ends it may take a snapshot (a mark) of what the board
// shows. Checks are pure functions of those marks: every number they report
// was measured by the real processes (consumer reports, broker offsets,
// store totals through consumer-query, the independent audit of the topic).
//
// The Runner plays a scenario against a Host (the lab); it never touches the
// UI. The TUI shows Progress values, a headless run prints the timeline
// notes the runner adds, and --report carries the Result.
package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

// Scenario is one guided lesson.
type Scenario struct {
	// Name is the contract name (--scenario NAME).
	Name string
	// Title is a short heading; Summary the one line --list-scenarios prints.
	Title   string
	Summary string
	// Article is what the seed article says about it, in English.
	Article string
	// UsageMode and UsageReset: how consumer-usage must run when the
	// scenario starts ("" = as it is); the runner switches it first.
	UsageMode  string
	UsageReset string
	// Brokers: the scenario needs a cluster of this many brokers
	// (--cluster N); 0 runs on any stack.
	Brokers int
	// OwnBroker: the scenario kills a broker, so it needs one the
	// dashboard runs (the embedded broker or --cluster N); it refuses to
	// start on a broker given with --brokers.
	OwnBroker bool
	// OffsetsRetention: the scenario waits for the broker to expire
	// commits, so it needs the lab's broker started with an offsets
	// retention of at most this (--offsets-retention); 0: any broker.
	OffsetsRetention time.Duration
	// Baseline: the scenario measures drift, so it starts from a new
	// baseline (reset-lab: usage records and checkpoints cleared,
	// consumer-usage reading on from the end of the topic), and says so.
	Baseline bool
	// Rebuild: how consumer-current must rebuild when the scenario starts
	// ("" = as it is); the runner switches it first.
	Rebuild string
	// Panel names a view the dashboard shows in the sensors' and usage's
	// place while the scenario's narration is on ("" = none): PanelCost.
	Panel string
	// MaxReplay: the scenario replays consumer-usage from earliest through
	// the store, one write a message, so it refuses to start on a topic of
	// more messages than that (0: no bound) rather than time out minutes in.
	MaxReplay int64
	Steps     []Step
	Checks    []Check
	// Cleanup: script actions performed when the run stops before its last
	// step (resume a producer a step paused); CleanupFrom, when set, writes
	// them from the board at that moment instead (thaw what is frozen).
	Cleanup     string
	CleanupFrom func(Observation) string
}

// Step is one thing that happens, in order: Do (the dashboard acts),
// Press (the presenter acts), Hold, Until, Then (the dashboard acts again)
// and Mark.
type Step struct {
	// Title is a few words ("Crash consumer-current").
	Title string
	// Say is the narration; Watch what to look at on screen meanwhile.
	Say   string
	Watch string
	// Event, when Watch names an event, is a piece of its text: while the
	// narration covers the events panel it keeps the step's latest event
	// containing it in view ("leader 2 →"), and so does the next step
	// until its own comes.
	Event string
	// Do: script actions the dashboard performs, in script syntax, one per
	// line (see internal/script).
	Do string
	// Press asks the presenter for a key.
	Press *Press
	// Hold keeps the step on screen at least this long (lag growing, say).
	Hold time.Duration
	// Until is waited for (it must hold for Stable) before the step ends;
	// Timeout bounds the wait (default DefaultTimeout).
	Until   *Cond
	Stable  time.Duration
	Timeout time.Duration
	// Then: script actions performed once Until holds (a quiet moment to
	// measure in: see measure).
	Then string
	// From, when set, writes Do and Then from the board as the step
	// begins, in place of theirs where it returns them (a cluster scenario
	// acts on the broker that leads the busiest partition, whichever it
	// is); an error stops the run.
	From func(Observation) (do, then string, err error)
	// Tell, when set, names what happened in the step, with its offsets,
	// read from the board when it ends: a line on the timeline.
	Tell func(Observation) string
	// Mark names the snapshot taken when the step ends ("" = none).
	Mark string
	// EndsAnyway: when Until times out the step ends all the same (its
	// mark is taken) instead of failing the run: what it waited for is
	// what the checks judge (a consumer that never catches up is graded).
	EndsAnyway bool
}

// measure makes the next mark exact: with the producer paused and every
// consumer, consumer-query and the audit caught up and read again
// (wait-caught-up), recorded and expected usage cover the same messages.
// While messages flow, a usage answer and an audit read taken a moment
// apart differ by the messages in between.
const measure = "pause producer\nwait-caught-up 60s"

// DefaultTimeout bounds a step's Until when the step sets none.
const DefaultTimeout = 90 * time.Second

// Press is an action the presenter asks of the dashboard by its key. Its
// effect (not the key itself) ends the step, so typing "3x" or using the
// arrows works too.
type Press struct {
	// Action is one the narration can ask for (it has a Hint) and a
	// headless run can perform (presses in runner.go).
	Action action.Name
	// Process is the process the key acts on (selected for the presenter).
	Process string
	// Value is what Mode or Reset switches to ("guarded", "earliest", ...).
	Value string
}

// Cond is a condition of the board, in words and as a test.
type Cond struct {
	What  string
	Holds func(Observation) bool
}

// Check confirms the lesson with measured numbers.
type Check struct {
	// What the check claims ("state rebuilt identical to before the crash").
	What string
	// Needs lists the marks Eval reads; the check is evaluated as soon as
	// they all exist, and fails as "not measured" if the run ends without.
	Needs []string
	// Eval says whether the claim held and what was observed, in words
	// with the numbers ("10/10 sensors identical, rebuilt in 0.4 s").
	Eval func(Marks) (passed bool, observed string)
}

// Marks are the snapshots a run has taken, by name.
type Marks map[string]Observation

// Info is what a picker and --list-scenarios show.
type Info struct {
	Name, Title, Summary string
}

// Info returns the scenario's listing.
func (s Scenario) Info() Info { return Info{Name: s.Name, Title: s.Title, Summary: s.Summary} }

// CheckResult is one check's outcome (the report's checks entries).
type CheckResult struct {
	What     string `json:"what"`
	Passed   bool   `json:"passed"`
	Observed string `json:"observed"`
	// Pending: not evaluated yet (progress only; never in a final Result).
	Pending bool `json:"-"`
}

// Result is a finished run (the report's scenario entry).
type Result struct {
	Name   string        `json:"name"`
	Title  string        `json:"title"`
	Passed bool          `json:"passed"`
	Checks []CheckResult `json:"checks"`
	// Error says why the run stopped early (a step timed out, an action
	// failed, it was cancelled); empty when every step ran.
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
	// NotRun: the scenario refused to start on this lab (Error says why)
	// before it changed anything.
	NotRun bool `json:"not_run,omitempty"`
	// Performed is every action the run performed, in order: a seeded
	// schedule as it was run.
	Performed []Performed `json:"performed,omitempty"`
}

// Performed is one action a run performed, in script syntax, and when
// (seconds from the run's start).
type Performed struct {
	Seconds float64 `json:"seconds"`
	Action  string  `json:"action"`
}

// PanelCost is the rebuild-cost chart (Scenario.Panel).
const PanelCost = "cost"

// Progress is what the narration panel shows; the runner reports one at
// every change.
type Progress struct {
	Name, Title, Article string
	// Panel is the scenario's Panel.
	Panel string
	// Step is 1-based; 0 while preparing the stack.
	Step, Steps int
	StepTitle   string
	Say, Watch  string
	// Event is the step's Event, StepAt when the step began (only events
	// from then on are its); PrevEvent and PrevAt the same of the step
	// before, shown until the step's own event comes.
	Event     string
	StepAt    time.Time
	PrevEvent string
	PrevAt    time.Time
	// Press is set while the runner waits for the presenter's key.
	Press *Press
	// Waiting says what the runner waits for ("" when nothing).
	Waiting string
	// HoldUntil, while a step holds the screen (Hold), is when it ends, so
	// a view can count down; zero otherwise.
	HoldUntil time.Time
	Checks    []CheckResult
	// Done: the run ended; Passed and Err are final; NotRun: it refused to
	// start, changing nothing (Err says why).
	Done   bool
	Passed bool
	Err    string
	NotRun bool
}

// Catalog returns every scenario, in teaching order.
func Catalog() []Scenario { return append([]Scenario(nil), catalog...) }

// Names lists the scenario names in catalog order.
func Names() []string {
	names := make([]string, len(catalog))
	for i, s := range catalog {
		names[i] = s.Name
	}
	return names
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range catalog {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// ErrUnknown is the message for a name that is not in the catalog.
func ErrUnknown(name string) error {
	return fmt.Errorf("unknown scenario %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Needs is what the scenario needs to run, as the dashboard's flags
// ("--cluster 3"); "" when it runs on any stack.
func (s Scenario) Needs() string {
	var needs []string
	if s.Brokers > 0 {
		needs = append(needs, fmt.Sprintf("--cluster %d", s.Brokers))
	}
	if s.OffsetsRetention > 0 {
		needs = append(needs, "--offsets-retention "+shortRetention)
	}
	return strings.Join(needs, " ")
}

// shortRetention is the offsets retention Needs suggests: short enough for
// a lesson on the embedded broker (Apache Kafka's shortest is 1m).
const shortRetention = "5s"

// retentionFits refuses a scenario that waits for commits to expire on a
// lab whose broker keeps them too long (retention: the lab's, 0 unknown).
func (s Scenario) retentionFits(retention time.Duration) error {
	if s.OffsetsRetention == 0 || (retention > 0 && retention <= s.OffsetsRetention) {
		return nil
	}
	kept := "the broker's default (7 days), or an external broker's own"
	if retention > 0 {
		kept = minutes(retention)
	}
	return refusal{fmt.Sprintf("scenario %s waits for the broker to expire committed offsets: start the dashboard with "+
		"--offsets-retention %s (at most %s; on --cluster, 1m) on its own broker; this one keeps them %s. Nothing was changed",
		s.Name, shortRetention, minutes(s.OffsetsRetention), kept)}
}

// minutes writes a whole number of minutes as Kafka's settings count them
// ("2m"), any other duration as Go does.
func minutes(d time.Duration) string {
	if d > 0 && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// Described is the scenario's summary led by what it needs to run, if
// anything: "needs --cluster 3: kill broker-2, …". Leading, it is never cut.
func (s Scenario) Described() string {
	if needs := s.Needs(); needs != "" {
		return "needs " + needs + ": " + s.Summary
	}
	return s.Summary
}

// List is the --list-scenarios text: one line per scenario.
func List() string {
	var b strings.Builder
	w := 0
	for _, s := range catalog {
		w = max(w, len(s.Name))
	}
	for _, s := range catalog {
		fmt.Fprintf(&b, "%-*s  %s\n", w, s.Name, s.Described())
	}
	return b.String()
}

// KeyHint is how the narration asks for a press: "press x to crash
// consumer-current (SIGKILL)".
func (p Press) KeyHint() string { return action.Of(p.Action).Ask(p.Process, p.Value) }
