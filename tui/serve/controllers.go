package serve

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/lab"
)

// attendeeControl is an attendee's keys on their own lab: the lab itself,
// counting the crashes they cause for the server's table.
type attendeeControl struct {
	*lab.Lab
	crashes *atomic.Int64
}

func (c attendeeControl) Do(ctx context.Context, call action.Call) action.Result {
	r := c.Lab.Do(ctx, call)
	if call.Name == action.Crash && r.Err == nil {
		c.crashes.Add(1)
	}
	return r
}

// errReadOnly answers every action of a watcher: the read-only model
// refuses the keys first; this is the second lock on the door.
var errReadOnly = errors.New("read-only view: this is the presenter's lab")

// readOnlyControl acts on nothing: a watcher may only do what the registry
// says a watcher may (action.Action.Watcher), and none of that reaches a
// lab.
type readOnlyControl struct{}

func (readOnlyControl) Do(_ context.Context, c action.Call) action.Result {
	if !action.Of(c.Name).Watcher {
		return c.Result(errReadOnly)
	}
	return c.Result(nil)
}

func (readOnlyControl) Tail(string, int) []string { return nil }
