package script

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

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

// verb is one verb of the language: what follows it and, for a wait, what
// it runs. Every other verb is a call (Action.Call) the Target carries out.
type verb struct {
	name action.Name
	grammar
	wait func(ctx context.Context, t Target, a Action, after clock) error
	// sets is the call's value when the line names none (freeze sets
	// frozen where the z key toggles).
	sets string
}

// clock is the timer of wait and of the timeouts.
type clock = func(time.Duration) <-chan time.Time

// language is every verb, in the order a message lists them.
var language = []verb{
	{name: action.Wait, grammar: grammar{parse: parseDuration, syntax: "DURATION"}, wait: runWait},
	{name: action.Crash, grammar: grammar{parse: parseProcess, names: processes}},
	{name: action.Stop, grammar: grammar{parse: parseProcess, names: processes}},
	{name: action.Start, grammar: grammar{parse: parseProcess, names: processes}},
	{name: action.Restart, grammar: grammar{parse: parseProcess, names: processes}},
	{name: action.Pause, grammar: grammar{parse: parseProcess, names: []string{board.Producer}}, sets: "pause"},
	{name: action.Resume, grammar: grammar{parse: parseProcess, names: []string{board.Producer}}},
	{name: action.WaitCaughtUp, grammar: grammar{parse: parseDuration, syntax: "DURATION"}, wait: runWaitCaughtUp},
	{name: action.CrashAt, grammar: grammar{parse: parseProcess, names: []string{board.Usage}, values: crashPoints, what: "crash point"}},
	{name: action.Mode, grammar: grammar{parse: parseProcess, names: []string{board.Usage}, values: modes, what: "mode"}},
	{name: action.Reset, grammar: grammar{parse: parseProcess, names: []string{board.Usage}, values: resets, what: "reset"}},
	{name: action.ResetLab, grammar: grammar{parse: parseNothing}},
	{name: action.InjectBad, grammar: grammar{parse: parseCount, syntax: "N"}},
	{name: action.History, grammar: grammar{parse: parseHistory, syntax: "DURATION|MESSAGES"}},
	{name: action.Rebuild, grammar: grammar{parse: parseValue, values: rebuilds, what: "rebuild strategy"}},
	{name: action.Backlog, grammar: grammar{parse: parseBacklog, syntax: "N"}},
	{name: action.Quit, grammar: grammar{parse: parseNothing}},
	{name: action.Freeze, grammar: grammar{parse: parseProcess, names: processes}, sets: "frozen"},
	{name: action.Thaw, grammar: grammar{parse: parseProcess, names: processes}},
	{name: action.Scale, grammar: grammar{parse: parseScale, names: []string{board.Usage}, syntax: "consumer-usage N (N from 1 to 3)"}},
	{name: action.EffectDelay, grammar: grammar{parse: parseEffectDelay, names: instances, syntax: strings.Join(instances, "|") + " DURATION (0s to 1m)"}},
	{name: action.WaitHeld, grammar: grammar{parse: parseTimeout, names: instances, syntax: strings.Join(instances, "|") + " TIMEOUT"},
		wait: waitNamed(Target.WaitHeld, "%s holds no usage write")},
	{name: action.WaitDown, grammar: grammar{parse: parseTimeout, names: processes, syntax: "NAME TIMEOUT"},
		wait: waitNamed(Target.WaitDown, "%s still running")},
	{name: action.WaitISR, grammar: grammar{parse: parseWaitISR, syntax: "N TIMEOUT"}, wait: runWaitISR},
	{name: action.WaitBlocked, grammar: grammar{parse: parseTimeout, names: []string{board.Producer}, syntax: "producer TIMEOUT"},
		wait: waitNamed(Target.WaitBlocked, "%s not blocked")},
	{name: action.WaitLeads, grammar: grammar{parse: parseTimeout, names: clusterBrokers(), syntax: "broker-N TIMEOUT"},
		wait: waitNamed(Target.WaitLeads, "%s leads no partition")},
	// wait-balanced: after a restart the controller hands leadership back
	// within its rebalance interval.
	{name: action.WaitBalanced, grammar: grammar{parse: parseDuration, syntax: "DURATION"}, wait: runWaitBalanced},
	// wait-deleted: retention deleted messages consumer-usage had not read.
	{name: action.WaitDeleted, grammar: grammar{parse: parseDuration, syntax: "TIMEOUT"}, wait: runWaitDeleted},
	{name: action.Park, grammar: grammar{parse: parseSensor, syntax: "sensor-NN|none"}},
	{name: action.WaitLastDeleted, grammar: grammar{parse: parseSensorTimeout, syntax: "sensor-NN TIMEOUT"},
		wait: waitNamed(Target.WaitLastDeleted, "the last message of %s is still in the log")},
	{name: action.Acks, grammar: grammar{parse: parseValue, values: acksValues, what: "acks setting", syntax: strings.Join(acksValues, "|")}},
	{name: action.AddPartitions, grammar: grammar{parse: parsePartitions, syntax: fmt.Sprintf("N (the new partition count, 2 to %d)", MaxPartitions)}},
	{name: action.RecreateTopic, grammar: grammar{parse: parseNothing}},
	{name: action.Retention, grammar: grammar{parse: parseDuration, syntax: "DURATION (5s to 1h)"}},
}

// verbs is the language by verb.
var verbs = func() map[Kind]verb {
	m := make(map[Kind]verb, len(language))
	for _, v := range language {
		m[v.name] = v
	}
	return m
}()

// verbOf is the verb of an action: the language's, or for a script action
// of the registry the language does not list, a call on its target (the
// process it names, if its target is one).
func verbOf(kind Kind) (verb, bool) {
	if v, ok := verbs[kind]; ok {
		return v, true
	}
	a, ok := action.Lookup(kind)
	if !ok || !a.Script || !a.ByLab() {
		return verb{}, false
	}
	names := map[action.Target][]string{
		action.TargetSelected: processes,
		action.TargetUsage:    {board.Usage},
		action.TargetProducer: {board.Producer},
		action.TargetCurrent:  {board.Current},
	}[a.Target]
	if names == nil {
		return verb{name: kind, grammar: grammar{parse: parseNothing}}, true
	}
	return verb{name: kind, grammar: grammar{parse: parseProcess, names: names}}, true
}

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
