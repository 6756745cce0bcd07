package lab

import (
	"context"
	"fmt"
	"sync"
	"syscall"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// setting is an action that sets one of the run's settings, written once
// for the key that toggles it and the script line that names the value: a
// call with a Value sets it, one without moves it on from what the lab
// knows now, read and acted on under one lock (two quick presses
// alternate).
type setting struct {
	// target is the process it acts on when the call names none.
	target string
	lock   func(l *Lab) *sync.Mutex
	// shown is the setting now, as the lab knows it.
	shown func(l *Lab, name string) string
	// next is where a toggle goes from cur.
	next func(cur string) string
	// parse checks a value asked for.
	parse func(v string) error
	// apply sets it (the lock held).
	apply func(l *Lab, name, v string) (restarted bool, err error)
}

// handle is the setting's handler; force, if set, is the value whatever
// the call says (thaw, resume).
func (s setting) handle(force string) handler {
	return func(l *Lab, _ context.Context, c action.Call) action.Result {
		name := c.Process
		if name == "" {
			name = s.target
		}
		r := action.Result{Op: c.Name, Name: name, Value: c.Value}
		if force != "" {
			r.Value = force
		}
		if s.target != "" && name != s.target {
			r.Err = fmt.Errorf("%s: only %s has it", c.Name, s.target)
			return r
		}
		if r.Value != "" {
			if r.Err = s.parse(r.Value); r.Err != nil {
				return r
			}
		}
		mu := s.lock(l)
		mu.Lock()
		defer mu.Unlock()
		if r.Value == "" {
			r.Value = s.next(s.shown(l, name))
		}
		r.Restarted, r.Err = s.apply(l, name, r.Value)
		return r
	}
}

// onBoard reads a setting from the lab's board.
func onBoard(f func(b *board.Board) string) func(*Lab, string) string {
	return func(l *Lab, _ string) string {
		var v string
		l.Observe(func(b *board.Board) { v = f(b) })
		return v
	}
}

// fromSettings reads a setting the lab owns.
func fromSettings(f func(s settings) string) func(*Lab, string) string {
	return func(l *Lab, _ string) string { return f(l.settingsNow()) }
}

// oneOf parses a value among words.
func oneOf[T ~string](parse func(string) (T, error)) func(string) error {
	return func(v string) error { _, err := parse(v); return err }
}

// The values of the freeze and pause toggles.
const (
	frozen = "frozen"
	thawed = "thawed"
	pause  = "pause"
	resume = "resume"
)

func other(a, b string) func(string) string {
	return func(cur string) string {
		if cur == a {
			return b
		}
		return a
	}
}

func words(vs ...string) func(string) error {
	return func(v string) error {
		for _, w := range vs {
			if v == w {
				return nil
			}
		}
		return fmt.Errorf("unknown value %q (want %v)", v, vs)
	}
}

// freezing is z (freeze, thaw): SIGSTOP or SIGCONT to the process group.
var freezing = setting{
	lock: func(l *Lab) *sync.Mutex { return &l.procMu },
	shown: func(l *Lab, name string) string {
		if l.sup.Frozen(name) {
			return frozen
		}
		return thawed
	},
	next:  other(frozen, thawed),
	parse: words(frozen, thawed),
	apply: func(l *Lab, name, v string) (bool, error) {
		if v == frozen {
			return false, l.Freeze(name)
		}
		return false, l.Thaw(name)
	},
}

// pausing is p (pause, resume): a pause asked for and not yet confirmed
// counts as paused.
var pausing = setting{
	target: board.Producer,
	lock:   func(l *Lab) *sync.Mutex { return &l.changeMu },
	shown: onBoard(func(b *board.Board) string {
		if b.Process(board.Producer).Producer.PausedOrPausing() {
			return pause
		}
		return resume
	}),
	next:  other(pause, resume),
	parse: words(pause, resume),
	apply: func(l *Lab, _, v string) (bool, error) { return false, l.setPausedLocked(v == pause) },
}

func (l *Lab) setPausedLocked(p bool) error {
	op, sig := board.OpResume, syscall.SIGUSR2
	if p {
		op, sig = board.OpPause, syscall.SIGUSR1
	}
	return l.act(board.Producer, op, func(name string) error { return l.sup.Signal(name, sig) })
}

// acking is a (acks): a running producer flushes what is in flight and
// switches at once; a stopped one starts with it. changeMu orders it with a
// pause, which also goes through the producer's publishing loop.
var acking = setting{
	target: board.Producer,
	lock:   func(l *Lab) *sync.Mutex { return &l.changeMu },
	shown:  fromSettings(func(s settings) string { return string(s.acks) }),
	next:   func(cur string) string { return string(lesson.Acks(cur).Other()) },
	parse:  oneOf(lesson.ParseAcks),
	apply:  func(l *Lab, _, v string) (bool, error) { return false, l.setAcksLocked(lesson.Acks(v)) },
}

// usageMode is m (mode): consumer-usage naive or guarded from its next
// start; a running one restarts at once, a stopped or crashed one is left
// stopped (restarted reports which).
var usageMode = setting{
	target: board.Usage,
	lock:   func(l *Lab) *sync.Mutex { return &l.changeMu },
	shown:  fromSettings(func(s settings) string { return string(s.mode) }),
	next:   func(cur string) string { return string(lesson.Mode(cur).Other()) },
	parse:  oneOf(lesson.ParseMode),
	apply: func(l *Lab, _, v string) (bool, error) {
		return l.switchUsage(board.Mode{UsageMode: v})
	},
}

// usageReset is e (reset): latest (its fixed group) or earliest (a fresh
// group, so the whole topic is replayed), likewise.
var usageReset = setting{
	target: board.Usage,
	lock:   func(l *Lab) *sync.Mutex { return &l.changeMu },
	shown:  fromSettings(func(s settings) string { return string(s.reset) }),
	next:   func(cur string) string { return string(lesson.Reset(cur).Other()) },
	parse:  oneOf(lesson.ParseReset),
	apply: func(l *Lab, _, v string) (bool, error) {
		return l.switchUsage(board.Mode{UsageReset: v})
	},
}

// rebuilding is B (rebuild): consumer-current's strategy along replay →
// snapshot → changelog → replay, from its next start.
var rebuilding = setting{
	target: board.Current,
	lock:   func(l *Lab) *sync.Mutex { return &l.changeMu },
	shown:  fromSettings(func(s settings) string { return string(s.rebuild) }),
	next:   func(cur string) string { return string(lesson.Rebuild(cur).Next()) },
	parse:  oneOf(lesson.ParseRebuild),
	apply:  func(l *Lab, _, v string) (bool, error) { return false, l.setRebuildLocked(lesson.Rebuild(v)) },
}

// switchUsage applies to every consumer-usage instance: each running one
// restarts with the new arguments, a stopped one keeps them for its start.
func (l *Lab) switchUsage(m board.Mode) (restarted bool, err error) {
	l.changeSettings(nil, func(s *settings) {
		s.mode = lesson.Mode(orDefault(m.UsageMode, string(s.mode)))
		s.reset = lesson.Reset(orDefault(m.UsageReset, string(s.reset)))
	})
	restarted, err = l.restartUsageInstances()
	if err == nil && !restarted {
		l.Note("consumer-usage is not running: the change applies when it starts (r starts it)")
	}
	return restarted, err
}
