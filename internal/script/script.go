// Package script is the action language of --script files, workshop
// scenarios and tests: one action per line, run in order against the
// dashboard (a Target). Its verbs are the script actions of the registry
// (internal/action); language below gives each its grammar and handler.
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
//	acks 1                                the producer's acks: 1|all (a running producer flushes and switches)
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
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
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
	case action.Wait, action.WaitCaughtUp, action.WaitBalanced:
		return string(a.Kind) + " " + a.Duration.String()
	case action.Quit, action.ResetLab, action.RecreateTopic:
		return string(a.Kind)
	case action.InjectBad, action.AddPartitions, action.Backlog:
		return fmt.Sprintf("%s %d", a.Kind, a.Count)
	case action.Scale:
		return fmt.Sprintf("%s %s %d", a.Kind, a.Name, a.Count)
	case action.EffectDelay, action.WaitHeld, action.WaitDown, action.WaitBlocked, action.WaitLeads:
		return fmt.Sprintf("%s %s %s", a.Kind, a.Name, a.Duration)
	case action.WaitISR:
		return fmt.Sprintf("%s %d %s", a.Kind, a.Count, a.Duration)
	case action.CrashAt, action.Mode, action.Reset:
		return string(a.Kind) + " " + a.Name + " " + a.Value
	case action.Acks:
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

// grammar says what follows a verb.
type grammar struct {
	parse  func(a Action, g grammar, args []string) (Action, string)
	names  []string // the process names it takes (nil: none)
	values []string // then one value among these (nil: none)
	what   string   // "crash point", "mode", "reset" for messages
	// syntax is what follows the verb in a usage message, when the names
	// and values do not say it.
	syntax string
}

// verb is one verb of the language: what follows it and what it does.
type verb struct {
	name action.Name
	grammar
	run func(ctx context.Context, t Target, a Action, after clock) error
}

// clock is the timer of wait and of the timeouts.
type clock = func(time.Duration) <-chan time.Time

// language is every verb, in the order a message lists them.
var language = []verb{
	{action.Wait, grammar{parse: parseDuration, syntax: "DURATION"}, runWait},
	{action.Crash, grammar{parse: parseProcess, names: processes}, named(Target.Crash)},
	{action.Stop, grammar{parse: parseProcess, names: processes}, named(Target.Stop)},
	{action.Start, grammar{parse: parseProcess, names: processes}, named(Target.Start)},
	{action.Restart, grammar{parse: parseProcess, names: processes}, named(Target.Restart)},
	{action.Pause, grammar{parse: parseProcess, names: []string{board.Producer}}, plain(Target.Pause)},
	{action.Resume, grammar{parse: parseProcess, names: []string{board.Producer}}, plain(Target.Resume)},
	{action.WaitCaughtUp, grammar{parse: parseDuration, syntax: "DURATION"}, runWaitCaughtUp},
	{action.CrashAt, grammar{parse: parseProcess, names: []string{board.Usage}, values: crashPoints, what: "crash point"}, valued(Target.ArmCrash)},
	{action.Mode, grammar{parse: parseProcess, names: []string{board.Usage}, values: modes, what: "mode"}, valued(Target.SetMode)},
	{action.Reset, grammar{parse: parseProcess, names: []string{board.Usage}, values: resets, what: "reset"}, valued(Target.SetReset)},
	{action.ResetLab, grammar{parse: parseNothing}, plain(Target.ResetLab)},
	{action.InjectBad, grammar{parse: parseCount, syntax: "N"}, runInjectBad},
	{action.History, grammar{parse: parseHistory, syntax: "DURATION|MESSAGES"}, runHistory},
	{action.Rebuild, grammar{parse: parseValue, values: rebuilds, what: "rebuild strategy"},
		func(_ context.Context, t Target, a Action, _ clock) error { return t.SetRebuild(a.Value) }},
	{action.Backlog, grammar{parse: parseBacklog, syntax: "N"}, func(ctx context.Context, t Target, a Action, _ clock) error {
		return t.PublishHistory(ctx, a.Count)
	}},
	{action.Quit, grammar{parse: parseNothing}, func(_ context.Context, t Target, _ Action, _ clock) error { t.Quit(); return nil }},
	{action.Freeze, grammar{parse: parseProcess, names: processes}, named(Target.Freeze)},
	{action.Thaw, grammar{parse: parseProcess, names: processes}, named(Target.Thaw)},
	{action.Scale, grammar{parse: parseScale, names: []string{board.Usage}, syntax: "consumer-usage N (N from 1 to 3)"},
		func(_ context.Context, t Target, a Action, _ clock) error { return t.Scale(a.Count) }},
	{action.EffectDelay, grammar{parse: parseEffectDelay, names: instances, syntax: strings.Join(instances, "|") + " DURATION (0s to 1m)"},
		func(_ context.Context, t Target, a Action, _ clock) error {
			return t.SetEffectDelay(a.Name, a.Duration)
		}},
	{action.WaitHeld, grammar{parse: parseTimeout, names: instances, syntax: strings.Join(instances, "|") + " TIMEOUT"}, waitNamed(Target.WaitHeld, "%s holds no usage write")},
	{action.WaitDown, grammar{parse: parseTimeout, names: processes, syntax: "NAME TIMEOUT"}, waitNamed(Target.WaitDown, "%s still running")},
	{action.WaitISR, grammar{parse: parseWaitISR, syntax: "N TIMEOUT"}, runWaitISR},
	{action.WaitBlocked, grammar{parse: parseTimeout, names: []string{board.Producer}, syntax: "producer TIMEOUT"}, waitNamed(Target.WaitBlocked, "%s not blocked")},
	{action.WaitLeads, grammar{parse: parseTimeout, names: clusterBrokers(), syntax: "broker-N TIMEOUT"}, waitNamed(Target.WaitLeads, "%s leads no partition")},
	// wait-balanced: after a restart the controller hands leadership back
	// within its rebalance interval.
	{action.WaitBalanced, grammar{parse: parseDuration, syntax: "DURATION"}, runWaitBalanced},
	{action.Acks, grammar{parse: parseValue, values: acksValues, what: "acks setting", syntax: strings.Join(acksValues, "|")},
		func(_ context.Context, t Target, a Action, _ clock) error { return t.SetAcks(a.Value) }},
	{action.AddPartitions, grammar{parse: parsePartitions, syntax: fmt.Sprintf("N (the new partition count, 2 to %d)", MaxPartitions)},
		func(_ context.Context, t Target, a Action, _ clock) error { return t.AddPartitions(a.Count) }},
	{action.RecreateTopic, grammar{parse: parseNothing},
		func(ctx context.Context, t Target, _ Action, _ clock) error { return t.RecreateTopic(ctx) }},
}

// parseBacklog parses "backlog 4000".
func parseBacklog(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing message count (usage: %s)", a.Kind, usage(a.Kind, g))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxHistory {
		return a, fmt.Sprintf("%s: bad message count %q (want a number from 1 to %d)", a.Kind, args[0], MaxHistory)
	}
	a.Count = n
	return a, extra(a.Kind, g, args, 1)
}

// MaxPartitions bounds add-partitions: a lesson needs a few.
const MaxPartitions = 32

// parsePartitions parses "add-partitions 4".
func parsePartitions(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing partition count (usage: %s)", a.Kind, usage(a.Kind, g))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 2 || n > MaxPartitions {
		return a, fmt.Sprintf("%s: bad partition count %q (want a number from 2 to %d, above the topic's count)", a.Kind, args[0], MaxPartitions)
	}
	a.Count = n
	return a, extra(a.Kind, g, args, 1)
}

// verbs is the language by verb.
var verbs = func() map[Kind]verb {
	m := make(map[Kind]verb, len(language))
	for _, v := range language {
		m[v.name] = v
	}
	return m
}()

// kinds lists the verbs in the language's order.
func kinds() []Kind {
	out := make([]Kind, len(language))
	for i, v := range language {
		out[i] = v.name
	}
	return out
}

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
	v, ok := verbs[kind]
	if !ok {
		return Action{}, fmt.Sprintf("unknown action %q (want one of %s)", f[0], join(kinds()))
	}
	return v.parse(Action{Kind: kind}, v.grammar, f[1:])
}

// extra is the message for arguments after the want ones ("" if none).
func extra(kind Kind, g grammar, args []string, want int) string {
	if len(args) > want {
		return fmt.Sprintf("%s: unexpected %q (usage: %s)", kind, strings.Join(args[want:], " "), usage(kind, g))
	}
	return ""
}

// parseNothing parses a verb alone ("reset-lab", "quit").
func parseNothing(a Action, g grammar, args []string) (Action, string) {
	return a, extra(a.Kind, g, args, 0)
}

// parseDuration parses "wait 5s".
func parseDuration(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing duration (like 5s or 1m30s)", a.Kind)
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d <= 0 {
		return a, fmt.Sprintf("%s: bad duration %q (want a positive duration like 5s or 1m30s)", a.Kind, args[0])
	}
	a.Duration = d
	return a, extra(a.Kind, g, args, 1)
}

// parseValue parses "VERB VALUE" where VALUE is one of g.values ("rebuild snapshot", "acks 1").
func parseValue(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing %s (want %s)", a.Kind, g.what, join(g.values))
	}
	if !slices.Contains(g.values, args[0]) {
		return a, fmt.Sprintf("%s: unknown %s %q (want %s)", a.Kind, g.what, args[0], join(g.values))
	}
	a.Value = args[0]
	return a, extra(a.Kind, g, args, 1)
}

// MaxHistory bounds the topic history grows (the lab's own limit).
const MaxHistory = 10_000_000

// parseHistory parses "history 3s" (until a replay takes that long) and
// "history 1000000" (until the topic holds that many messages).
func parseHistory(a Action, g grammar, args []string) (Action, string) {
	if len(args) > 0 {
		if n, err := strconv.Atoi(args[0]); err == nil {
			if n < 1 || n > MaxHistory {
				return a, fmt.Sprintf("%s: bad message count %q (want a number from 1 to %d)", a.Kind, args[0], MaxHistory)
			}
			a.Count = n
			return a, extra(a.Kind, g, args, 1)
		}
	}
	return parseDuration(a, g, args)
}

func runHistory(ctx context.Context, t Target, a Action, _ clock) error {
	if a.Count > 0 {
		return t.GrowHistory(ctx, int64(a.Count))
	}
	return t.History(ctx, a.Duration)
}

// parseCount parses "inject-bad 9".
func parseCount(a Action, g grammar, args []string) (Action, string) {
	if len(args) == 0 {
		return a, fmt.Sprintf("%s: missing count (like 9: one record of every kind)", a.Kind)
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxInjectBad {
		return a, fmt.Sprintf("%s: bad count %q (want a number from 1 to %d)", a.Kind, args[0], MaxInjectBad)
	}
	a.Count = n
	return a, extra(a.Kind, g, args, 1)
}

// parseProcess parses "crash NAME" and, with values, "mode NAME VALUE".
func parseProcess(a Action, g grammar, args []string) (Action, string) {
	kind := a.Kind
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
	if g.values == nil {
		return a, extra(kind, g, args, 1)
	}
	if len(args) < 2 {
		return a, fmt.Sprintf("%s %s: missing %s (want %s)", kind, a.Name, g.what, join(g.values))
	}
	if !slices.Contains(g.values, args[1]) {
		return a, fmt.Sprintf("%s %s: unknown %s %q (want %s)", kind, a.Name, g.what, args[1], join(g.values))
	}
	a.Value = args[1]
	return a, extra(kind, g, args, 2)
}

// parseNameAndValue reads "VERB NAME VALUE" where NAME is one of g.names:
// the action with its name, the value, or a message.
func parseNameAndValue(a Action, g grammar, args []string) (Action, string, string) {
	kind := a.Kind
	if len(args) == 0 {
		return a, "", fmt.Sprintf("%s: missing process name (usage: %s)", kind, usage(kind, g))
	}
	if !slices.Contains(g.names, args[0]) {
		return a, "", fmt.Sprintf("%s: not possible for %q (only %s)", kind, args[0], join(g.names))
	}
	a.Name = args[0]
	if len(args) < 2 {
		return a, "", fmt.Sprintf("%s %s: missing value (usage: %s)", kind, a.Name, usage(kind, g))
	}
	if len(args) > 2 {
		return a, "", fmt.Sprintf("%s: unexpected %q (usage: %s)", kind, strings.Join(args[2:], " "), usage(kind, g))
	}
	return a, args[1], ""
}

// parseScale parses "scale consumer-usage N".
func parseScale(a Action, g grammar, args []string) (Action, string) {
	a, value, msg := parseNameAndValue(a, g, args)
	if msg != "" {
		return a, msg
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > board.MaxUsageInstances {
		return a, fmt.Sprintf("scale %s: bad instance count %q (want a number from 1 to %d)", a.Name, value, board.MaxUsageInstances)
	}
	a.Count = n
	return a, ""
}

// parseTimeout parses "wait-held NAME 30s" and the other waits on a process.
func parseTimeout(a Action, g grammar, args []string) (Action, string) {
	a, value, msg := parseNameAndValue(a, g, args)
	if msg != "" {
		return a, msg
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return a, fmt.Sprintf("%s %s: bad timeout %q (want a positive duration like 30s)", a.Kind, a.Name, value)
	}
	a.Duration = d
	return a, ""
}

// parseEffectDelay parses "effect-delay NAME 8s".
func parseEffectDelay(a Action, g grammar, args []string) (Action, string) {
	a, value, msg := parseNameAndValue(a, g, args)
	if msg != "" {
		return a, msg
	}
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 || d > MaxEffectDelay {
		return a, fmt.Sprintf("effect-delay %s: bad delay %q (want a duration from 0s to %s, like 8s)", a.Name, value, MaxEffectDelay)
	}
	a.Duration = d
	return a, ""
}

// MaxISR bounds wait-isr's count: --cluster runs at most 5 brokers.
const MaxISR = 5

// parseWaitISR parses "wait-isr N TIMEOUT".
func parseWaitISR(a Action, g grammar, args []string) (Action, string) {
	if len(args) != 2 {
		return a, fmt.Sprintf("wait-isr: want a count and a timeout (usage: %s)", usage(action.WaitISR, g))
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

// usage is a verb's syntax, for messages.
func usage(k Kind, g grammar) string {
	switch {
	case g.syntax != "":
		return string(k) + " " + g.syntax
	case g.values != nil && g.names == nil:
		return string(k) + " " + strings.Join(g.values, "|")
	case g.values != nil:
		return string(k) + " " + strings.Join(g.names, "|") + " " + strings.Join(g.values, "|")
	case len(g.names) == 1:
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
	// History grows the topic with history until consumer-current's
	// replay from earliest shows its progress for at least d (a new
	// baseline for consumer-usage, which does not count the history).
	History(ctx context.Context, d time.Duration) error
	// GrowHistory grows the topic with history until it holds n messages
	// (a new baseline for consumer-usage, as History).
	GrowHistory(ctx context.Context, n int64) error
	// SetRebuild makes consumer-current rebuild with strategy from its
	// next start (a running one prepares it at once).
	SetRebuild(strategy string) error
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
	// SetAcks sets the producer's acks ("all" or "1"): a running producer
	// flushes and switches at once, a stopped one starts with it.
	SetAcks(acks string) error
	// PublishHistory has the producer publish n messages of history at
	// once (backlog N): nothing else changes.
	PublishHistory(ctx context.Context, n int) error
	// AddPartitions grows the topic to n partitions (a topic cannot
	// shrink: n must be above its count).
	AddPartitions(n int) error
	// RecreateTopic deletes the topic and creates it again with 3
	// partitions, every process restarted on it and consumer-usage on a
	// new baseline.
	RecreateTopic(ctx context.Context) error
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
	v, ok := verbs[a.Kind]
	if !ok {
		return fmt.Errorf("unknown action kind %q", a.Kind)
	}
	return v.run(ctx, r.Target, a, after)
}

// named runs a target method on the line's process.
func named(f func(Target, string) error) func(context.Context, Target, Action, clock) error {
	return func(_ context.Context, t Target, a Action, _ clock) error { return f(t, a.Name) }
}

// valued runs a target method on the line's process and value.
func valued(f func(Target, string, string) error) func(context.Context, Target, Action, clock) error {
	return func(_ context.Context, t Target, a Action, _ clock) error { return f(t, a.Name, a.Value) }
}

// plain runs a target method that takes nothing.
func plain(f func(Target) error) func(context.Context, Target, Action, clock) error {
	return func(_ context.Context, t Target, _ Action, _ clock) error { return f(t) }
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

func runInjectBad(_ context.Context, t Target, a Action, _ clock) error {
	n, err := t.InjectBad(a.Count)
	if err == nil && n != a.Count {
		err = fmt.Errorf("%d of %d malformed records delivered", n, a.Count)
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

// within runs wait with timeout; its failure reads "<what> after <timeout>: <cause>".
func within(ctx context.Context, timeout time.Duration, wait func(context.Context) error, what string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := wait(ctx); err != nil {
		return fmt.Errorf("%s after %v: %w", fmt.Sprintf(what, args...), timeout, err)
	}
	return nil
}
