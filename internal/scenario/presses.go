package scenario

import (
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// pressDone tells, from the board, that the action of p has taken effect
// since base: the crash, the restart, the crash point, the switch.
func pressDone(p Press, base, now Observation) bool {
	r, ok := presses[p.Action]
	return ok && r.done(p, base, now)
}

// pressRule is the call a step's action makes in a headless run (the key's
// own, unless call says otherwise), and how the board shows it took effect.
type pressRule struct {
	call func(p Press, base Observation) action.Call
	done func(p Press, base, now Observation) bool
}

// asKey is the call the key makes: the action on the step's process, with
// the step's value.
func asKey(p Press, _ Observation) action.Call {
	return action.Call{Name: p.Action, Process: p.Process, Value: p.Value}
}

// presses has a rule for every action the narration can ask for (the
// registry's actions with a Hint).
var presses = map[action.Name]pressRule{
	action.Crash: {
		call: asKey,
		done: func(p Press, base, now Observation) bool {
			was, is := base.Proc(p.Process), now.Proc(p.Process)
			return is.Crashes > was.Crashes && !is.Alive
		},
	},
	action.Restart: {
		call: func(p Press, base Observation) action.Call {
			if base.Proc(p.Process).Alive {
				return action.Call{Name: action.Restart, Process: p.Process}
			}
			return action.Call{Name: action.Start, Process: p.Process}
		},
		done: restarted,
	},
	action.Stop: {
		call: asKey,
		done: func(p Press, base, now Observation) bool {
			was, is := base.Proc(p.Process), now.Proc(p.Process)
			return !is.Alive && is.LastExit != nil && (was.LastExit == nil || is.LastExit.At.After(was.LastExit.At))
		},
	},
	action.CrashAt: {
		call: func(p Press, _ Observation) action.Call {
			return action.Call{Name: action.CrashAt, Process: p.Process, Value: "after-delta"}
		},
		done: func(p Press, base, now Observation) bool {
			was, is := base.Proc(p.Process), now.Proc(p.Process)
			hit := is.LastCrashPoint
			return hit != nil && (was.LastCrashPoint == nil || hit.At.After(was.LastCrashPoint.At)) && !is.Alive
		},
	},
	action.Mode: {
		call: asKey,
		done: func(p Press, base, now Observation) bool { return now.UsageMode == p.Value && restarted(p, base, now) },
	},
	action.Reset: {
		call: asKey,
		done: func(p Press, base, now Observation) bool { return now.UsageReset == p.Value && restarted(p, base, now) },
	},
	action.Pause: {
		call: func(_ Press, base Observation) action.Call {
			if base.Proc(board.Producer).Producer.Paused {
				return action.Call{Name: action.Pause, Process: board.Producer, Value: "resume"}
			}
			return action.Call{Name: action.Pause, Process: board.Producer, Value: "pause"}
		},
		done: func(_ Press, base, now Observation) bool {
			return now.Proc(board.Producer).Producer.Paused != base.Proc(board.Producer).Producer.Paused
		},
	},
	action.Acks: {
		call: asKey,
		done: func(p Press, _, now Observation) bool {
			return now.Acks.Running == p.Value && now.Acks.Setting == p.Value
		},
	},
	action.ScaleUp: {
		call: func(_ Press, base Observation) action.Call {
			return action.Call{Name: action.Scale, Process: board.Usage, Count: base.usageInstances() + 1}
		},
		done: func(_ Press, base, now Observation) bool {
			n := now.usageInstances()
			return n > base.usageInstances() && now.Proc(board.UsageInstance(n)).Alive
		},
	},
	action.Retention: {
		// The step's value is the retention ("20s"; "" the lab's).
		call: func(p Press, _ Observation) action.Call {
			d, err := time.ParseDuration(p.Value)
			if p.Value != "" && err != nil {
				d = -1 // the lab refuses it, naming the bounds
			}
			return action.Call{Name: action.Retention, Duration: d}
		},
		done: func(_ Press, _, now Observation) bool { return now.Parts.Retention > 0 },
	},
	action.AddPartitions: {
		call: func(p Press, _ Observation) action.Call {
			n, err := strconv.Atoi(p.Value)
			if err != nil {
				n = -1 // the lab refuses it, naming the count
			}
			return action.Call{Name: action.AddPartitions, Count: n}
		},
		done: func(p Press, _, now Observation) bool {
			return now.Parts.Fresh() && strconv.Itoa(len(now.Parts.Rows)) == p.Value
		},
	},
}

// restarted: the step's process started again since base and runs.
func restarted(p Press, base, now Observation) bool {
	was, is := base.Proc(p.Process), now.Proc(p.Process)
	return is.Starts > was.Starts && is.Alive
}
