package ui

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// What the status line says of an action's answer, and of an armed crash
// point until it fires.

// armWatch is a crash point the status line says is armed.
type armWatch struct {
	point string // "" when the status line says nothing of an arm
	// before is the latest hit known when the arm was asked for.
	before *board.CrashPointHit
	// seen: the board has shown the point armed. The controller's answer
	// can come before the board hears the process announce the arm.
	seen bool
}

// statusFollowsArm: a status line that says a crash point is armed stops
// saying so once the board no longer shows it armed: it fired (a hit newer
// than the one known when the arm was asked for, never an earlier crash's),
// was disarmed, or its process ended.
func (m *Model) statusFollowsArm() {
	w := &m.statusArm
	if w.point == "" {
		return
	}
	pv := m.board.Process(board.Usage)
	if hit := pv.LastCrashPoint; hit != nil && hit.Point == w.point && (w.before == nil || hit.At.After(w.before.At)) {
		m.setStatus(board.LevelBad, fmt.Sprintf("crash point %s fired at partition %d offset %d: consumer-usage SIGKILLed itself (r restarts it)",
			hit.Point, hit.Partition, hit.Offset))
		return
	}
	switch {
	case pv.Armed == w.point:
		w.seen = true
	case w.seen || !pv.Alive:
		m.setStatus(board.LevelInfo, "crash point "+w.point+" is no longer armed")
	}
}

// rebuildResult is what the status line says of a switch of strategy.
func rebuildResult(strategy string, running bool) string {
	if !running {
		return "consumer-current will rebuild by " + strategy + " at its next start (r starts it)"
	}
	switch strategy {
	case "snapshot":
		return "consumer-current wrote a snapshot and keeps one; its next start loads it (x then r, or r)"
	case "changelog":
		return "consumer-current published its changelog and keeps it up; its next start reads it (x then r, or r)"
	}
	return "consumer-current's next start replays the topic from earliest"
}

// doneWords says what an action that succeeded did, for the status line
// (the actions whose answer needs more than words are result's cases; an
// action in neither reads "NAME done").
var doneWords = map[action.Name]func(m Model, r ActionResultMsg) string{
	action.Crash: func(_ Model, r ActionResultMsg) string {
		return r.Name + " was SIGKILLed: it stays down until r restarts it"
	},
	action.Stop:    func(_ Model, r ActionResultMsg) string { return r.Name + " stopped gracefully" },
	action.Start:   func(_ Model, r ActionResultMsg) string { return r.Name + " started" },
	action.Restart: func(_ Model, r ActionResultMsg) string { return r.Name + " restarted" },
	action.Pause:   func(_ Model, r ActionResultMsg) string { return "producer: " + r.Value + " sent" },
	action.ResetLab: func(Model, ActionResultMsg) string {
		return "new baseline: consumer-usage reads on from the end of the topic, usage counts from 0"
	},
	action.Scale:     scaled,
	action.ScaleUp:   scaled,
	action.ScaleDown: scaled,
	action.InjectBad: func(_ Model, r ActionResultMsg) string {
		return "producer published " + r.Value + " malformed records: the consumers skip them, consumer-usage forwards them to the DLQ"
	},
	action.Rebuild: func(m Model, r ActionResultMsg) string {
		return rebuildResult(r.Value, m.board.Process(board.Current).Alive)
	},
	action.Acks: func(_ Model, r ActionResultMsg) string {
		return "producer: " + lesson.Acks(r.Value).Gist() + " (the events say more)"
	},
	action.Retention: func(_ Model, r ActionResultMsg) string {
		return r.Name + ": retention " + r.Value + ", older records are deleted; t shows each partition's log start"
	},
	action.AddPartitions: func(_ Model, r ActionResultMsg) string {
		return r.Name + " has " + r.Value + " partitions: producer and consumers use them within about a second; the events name the moved keys"
	},
}

func scaled(_ Model, r ActionResultMsg) string {
	return "consumer-usage runs " + r.Value + " instance(s) in one group: the events show the rebalance"
}

// failedVerb is how a failure line names an action whose key the status
// line words by another verb (c arms, + and - scale).
var failedVerb = map[action.Name]string{action.CrashAt: "arm", action.ScaleUp: "scale", action.ScaleDown: "scale"}

// result shows the lab's answer to a call.
func (m Model) result(r ActionResultMsg) Model {
	if r.Err != nil {
		m.setStatus(board.LevelBad, fmt.Sprintf("%s %s failed: %v", cmp.Or(failedVerb[r.Op], string(r.Op)), r.Name, r.Err))
		return m
	}
	if words, ok := doneWords[r.Op]; ok {
		m.setStatus(board.LevelGood, words(m, r))
		return m
	}
	switch r.Op {
	case action.Freeze:
		if r.Value == "frozen" {
			m.setStatus(board.LevelWarn, r.Name+" frozen (SIGSTOP): it holds its sockets and does nothing; z thaws it")
		} else {
			m.setStatus(board.LevelGood, r.Name+" thawed (SIGCONT): it carries on by itself")
		}
	case action.Mode, action.Reset:
		what := string(r.Op) + " " + r.Value
		if r.Restarted {
			m.setStatus(board.LevelGood, "consumer-usage restarted with "+what)
		} else {
			m.setStatus(board.LevelGood, "consumer-usage will start with "+what+" (it is not running: r starts it)")
		}
	case action.CrashAt:
		if r.Value == string(lesson.NoCrashPoint) {
			m.setStatus(board.LevelGood, "crash point disarmed on consumer-usage (c arms after-delta)")
		} else {
			m.setStatus(board.LevelGood, "crash point "+r.Value+" armed: consumer-usage SIGKILLs itself at the next message that reaches it (c: next point)")
			m.statusArm = armWatch{point: r.Value, before: m.crashBeforeArm}
			m.statusFollowsArm() // it may have fired before the answer came back
		}
	default:
		m.setStatus(board.LevelGood, strings.TrimSpace(string(r.Op)+" "+r.Name)+" done")
	}
	return m
}

func (m *Model) setStatus(level board.Level, text string) {
	m.status, m.statusLevel, m.statusArm = text, level, armWatch{}
}
