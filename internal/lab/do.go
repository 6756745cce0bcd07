package lab

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// handler carries out one action of the registry.
type handler func(l *Lab, ctx context.Context, c action.Call) action.Result

// handlers is the lab's one table of what every action does, whoever asks
// for it: a key, a script line or a scenario step all reach it through Do.
// The waits of the script are methods of their own (waits.go): they watch
// the board and change nothing. TestEveryCallHasAHandler keeps the table
// in step with the registry.
var handlers = map[action.Name]handler{
	action.Crash:         named(func(l *Lab, _ context.Context, n string) error { return l.Crash(n) }),
	action.Stop:          named(func(l *Lab, _ context.Context, n string) error { return l.Stop(n) }),
	action.Start:         named(func(l *Lab, _ context.Context, n string) error { return l.Start(n) }),
	action.Restart:       named(func(l *Lab, _ context.Context, n string) error { return l.Restart(n) }),
	action.Freeze:        freezing.handle(""),
	action.Thaw:          freezing.handle(thawed),
	action.Pause:         pausing.handle(""),
	action.Resume:        pausing.handle(resume),
	action.Acks:          acking.handle(""),
	action.Mode:          usageMode.handle(""),
	action.Reset:         usageReset.handle(""),
	action.Rebuild:       rebuilding.handle(""),
	action.CrashAt:       armCrash,
	action.ResetLab:      plain(func(l *Lab, _ context.Context) error { return l.ResetLab() }),
	action.InjectBad:     injectBad,
	action.Scale:         scaleTo,
	action.ScaleUp:       scaleBy(+1),
	action.ScaleDown:     scaleBy(-1),
	action.EffectDelay:   effectDelay,
	action.History:       history,
	action.Backlog:       backlog,
	action.AddPartitions: addPartitions,
	action.RecreateTopic: plain(func(l *Lab, ctx context.Context) error { return l.RecreateTopic(ctx) }),
	action.Retention:     setRetention,
	action.Park:          park,
	action.Quit:          plain(func(l *Lab, _ context.Context) error { l.RequestQuit(); return nil }),
}

// Do carries out c and reports what it did. An action without a handler
// here (a view's own, a wait) is an error, never a silent success.
func (l *Lab) Do(ctx context.Context, c action.Call) action.Result {
	h, ok := handlers[c.Name]
	if !ok {
		return c.Result(fmt.Errorf("%s: not an action the lab carries out", c.Name))
	}
	if a, _ := action.Lookup(c.Name); a.BuiltInUsage && l.yours() {
		return c.Result(fmt.Errorf("consumer-usage runs your command (--usage-cmd): %s is the built-in consumer-usage's; crash yours with x, restart it with r", c.Name))
	}
	return h(l, ctx, c)
}

// named is a handler of an action on the call's process.
func named(f func(l *Lab, ctx context.Context, name string) error) handler {
	return func(l *Lab, ctx context.Context, c action.Call) action.Result {
		return c.Result(f(l, ctx, c.Process))
	}
}

// plain is a handler of an action that takes nothing.
func plain(f func(l *Lab, ctx context.Context) error) handler {
	return func(l *Lab, ctx context.Context, c action.Call) action.Result { return c.Result(f(l, ctx)) }
}

func armCrash(l *Lab, _ context.Context, c action.Call) action.Result {
	return c.Result(l.ArmCrash(c.Process, c.Value))
}

// injectBad: Count records (0: one of each kind); the result's value is
// how many were delivered.
func injectBad(l *Lab, _ context.Context, c action.Call) action.Result {
	n, err := l.InjectBad(c.Count)
	r := c.Result(err)
	r.Name, r.Value = board.Producer, strconv.Itoa(n)
	return r
}

func scaleTo(l *Lab, _ context.Context, c action.Call) action.Result {
	r := c.Result(l.Scale(c.Count))
	r.Name, r.Value = board.Usage, strconv.Itoa(c.Count)
	return r
}

// scaleBy is + and -: one instance more or less than the board shows, or
// the Count the key asks for (what its viewer saw: two quick presses ask
// for the same count twice, as the viewer's board has not moved yet).
func scaleBy(delta int) handler {
	return func(l *Lab, _ context.Context, c action.Call) action.Result {
		n := c.Count
		if n == 0 {
			n = len(l.usageInstances()) + delta
		}
		r := c.Result(l.Scale(n))
		r.Name, r.Value = board.Usage, strconv.Itoa(n)
		return r
	}
}

func effectDelay(l *Lab, _ context.Context, c action.Call) action.Result {
	return c.Result(l.SetEffectDelay(c.Process, c.Duration))
}

// history grows the topic to Count messages, or until a replay takes
// Duration.
func history(l *Lab, ctx context.Context, c action.Call) action.Result {
	if c.Count > 0 {
		return c.Result(l.GrowHistory(ctx, int64(c.Count)))
	}
	return c.Result(l.History(ctx, c.Duration))
}

func backlog(l *Lab, ctx context.Context, c action.Call) action.Result {
	return c.Result(l.PublishHistory(ctx, c.Count))
}

// addPartitions grows the topic to Count partitions; the result names the
// topic and the count.
func addPartitions(l *Lab, _ context.Context, c action.Call) action.Result {
	r := c.Result(l.AddPartitions(c.Count))
	r.Name, r.Value = l.cfg.Topic, strconv.Itoa(c.Count)
	return r
}

// setRetention gives the topic a short retention (Duration; 0: the
// lab's); the result names the topic and the retention set.
func setRetention(l *Lab, ctx context.Context, c action.Call) action.Result {
	err := l.SetRetention(ctx, c.Duration)
	r := c.Result(err)
	r.Name, r.Value = l.cfg.Topic, l.retentionSetting().String()
	return r
}

// park has the producer stop publishing the call's sensor (Value; "none":
// none).
func park(l *Lab, _ context.Context, c action.Call) action.Result {
	r := c.Result(l.Park(c.Value))
	r.Name = board.Producer
	return r
}
