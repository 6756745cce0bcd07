// Package script is the action language of --script files, workshop
// scenarios and tests: one action per line, run in order against the
// dashboard (a Target). Its verbs are the script actions of the registry
// (internal/action): language (language.go) gives each its grammar
// (grammar.go); a line becomes an action.Call the lab carries out, or one
// of the waits (run.go).
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
//	history 3s                            grow the topic until consumer-current's replay takes 3s (a new baseline)
//	history 1000000                       grow the topic to 1,000,000 messages (a new baseline)
//	rebuild snapshot                      replay|snapshot|changelog: how consumer-current rebuilds from its next start
//	backlog 4000                          the producer publishes 4,000 messages of history at once (nothing else)
//	mode consumer-usage guarded           naive|guarded, from the next start
//	reset consumer-usage earliest         latest|earliest, from the next start
//	acks 1                                the producer's acks: all|1|0 (a running producer flushes and switches)
//	scale consumer-usage 3                run 1–3 instances of consumer-usage in its group
//	effect-delay consumer-usage-2 8s      hold each of that instance's usage writes 8s (0..1m; 0 = none)
//	wait-held consumer-usage 30s          wait until that instance holds a usage write; fail after 30s
//	wait-down consumer-usage 60s          wait until the process is down (an armed crash point fired); fail after 60s
//	wait-isr 2 60s                        wait until every partition has a leader and exactly 2 in-sync replicas (--cluster)
//	wait-blocked producer 60s             wait until the producer reports its records unacknowledged (blocked)
//	wait-leads broker-2 60s               wait until that broker leads a partition of the topic (--cluster)
//	wait-balanced 60s                     wait until every partition is led by its preferred (first) replica (--cluster)
//	add-partitions 4                      grow the topic to 4 partitions (keys whose CRC-32 modulo 4 differs move)
//	recreate-topic                        delete the topic and create it again with 3 partitions (a new baseline)
//	quit                                  end the dashboard
//
// NAME is one of producer, consumer-current, consumer-usage, consumer-query,
// broker, store, or a scaled instance of consumer-usage (consumer-usage-2,
// consumer-usage-3; the action fails while that instance is not shown), or
// with --cluster N controller and broker-1..broker-N.
package script

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
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
	rebuilds    = lesson.Words(lesson.Rebuilds)
	resets      = lesson.Words(lesson.Resets)
	acksValues  = lesson.Words(lesson.AcksSettings)
)

// Kind is the action a line names: it starts with the action's name, its
// verb (the registry's actions with Script, internal/action).
type Kind = action.Name

// MaxEffectDelay bounds effect-delay (consumer-usage's own limit).
const MaxEffectDelay = time.Minute

// Action is one parsed line.
type Action struct {
	Kind Kind
	// Name is the process (every kind but wait, wait-caught-up and quit).
	Name string
	// Value is the crash point, mode, reset or rebuild strategy (crash-at,
	// mode, reset, rebuild).
	Value string
	// Duration of wait and wait-caught-up; the delay of effect-delay.
	Duration time.Duration
	// Count of inject-bad; the number of instances of scale; the messages
	// history grows the topic to (0: it grows it by Duration).
	// Value is also the setting of acks.
	Count int
	// Line is the 1-based line in the source; 0 for actions built in code.
	Line int
}

// String is the action in script syntax: Parse(a.String()) gives a back
// (Line aside).
func (a Action) String() string {
	switch a.Kind {
	case action.History:
		if a.Count > 0 {
			return fmt.Sprintf("%s %d", a.Kind, a.Count)
		}
		return string(a.Kind) + " " + a.Duration.String()
	case action.Rebuild:
		return string(a.Kind) + " " + a.Value
	case action.Wait, action.WaitCaughtUp, action.WaitBalanced, action.WaitDeleted, action.Retention:
		return string(a.Kind) + " " + a.Duration.String()
	case action.Quit, action.ResetLab, action.RecreateTopic:
		return string(a.Kind)
	case action.InjectBad, action.AddPartitions, action.Backlog:
		return fmt.Sprintf("%s %d", a.Kind, a.Count)
	case action.Scale:
		return fmt.Sprintf("%s %s %d", a.Kind, a.Name, a.Count)
	case action.EffectDelay, action.WaitHeld, action.WaitDown, action.WaitBlocked, action.WaitLeads, action.WaitLastDeleted:
		return fmt.Sprintf("%s %s %s", a.Kind, a.Name, a.Duration)
	case action.WaitISR:
		return fmt.Sprintf("%s %d %s", a.Kind, a.Count, a.Duration)
	case action.CrashAt, action.Mode, action.Reset:
		return string(a.Kind) + " " + a.Name + " " + a.Value
	case action.Acks, action.Park:
		return string(a.Kind) + " " + a.Value
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
	v, ok := verbOf(kind)
	if !ok {
		return Action{}, fmt.Sprintf("unknown action %q (want one of %s)", f[0], join(kinds()))
	}
	return v.parse(Action{Kind: kind}, v.grammar, f[1:])
}
