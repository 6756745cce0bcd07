package action

import (
	"context"
	"time"
)

// Call is one request for an action, whoever makes it: a key, a script
// line or a scenario step builds the same value, and the lab carries it out
// (its one handler table). A zero Value asks a toggle to go the other way
// from what the lab knows (m: the other mode); a Value sets it (mode naive).
type Call struct {
	Name Name
	// Process is what it acts on (a process, or the topic for
	// add-partitions); "" where the action has one fixed target.
	Process string
	// Value is the setting asked for (a mode, a reset, a crash point, a
	// strategy, acks, frozen/thawed, pause/resume); "" toggles.
	Value string
	// Count is a number the action takes: bad records, instances,
	// partitions, messages of history.
	Count int
	// Duration is a time the action takes: an effect delay, a replay to
	// grow history to.
	Duration time.Duration
}

// Result is what a Call did. The dashboard's status line words it by Op.
type Result struct {
	// Op is the action carried out: the Call's Name, or the one it became
	// (restart of a process that is down starts it).
	Op Name
	// Name is the process (or topic) acted on.
	Name string
	// Value is what it set (the mode, frozen or thawed, pause or resume,
	// how many bad records were delivered, the instances asked for).
	Value string
	// Restarted: a mode or reset switch restarted a running consumer-usage.
	Restarted bool
	Err       error
}

// Doer carries out calls: the lab, or a fake in tests. Do blocks until the
// action is done (a crash waits for the exit); ctx bounds the actions that
// take long (history, recreate-topic).
type Doer interface {
	Do(ctx context.Context, c Call) Result
}

// Result is the call's answer with err: no value.
func (c Call) Result(err error) Result {
	return Result{Op: c.Name, Name: c.Process, Value: c.Value, Err: err}
}
