package lab

import (
	"context"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/script"
)

// ScriptTarget is the Lab as a script.Target: lifecycle actions are shown on
// the board as requests first ("crashing…"), exactly as a key press shows them.
type ScriptTarget struct{ *Lab }

func (t ScriptTarget) lifecycle(name, op string, f func(string) error) error {
	t.emit(board.Request{At: time.Now(), Name: name, Op: op})
	err := f(name)
	t.emit(board.RequestDone{At: time.Now(), Name: name, Op: op, Err: err})
	return err
}

// Crash is the script's crash action.
func (t ScriptTarget) Crash(name string) error { return t.lifecycle(name, board.OpCrash, t.Lab.Crash) }

// Stop is the script's stop action.
func (t ScriptTarget) Stop(name string) error { return t.lifecycle(name, board.OpStop, t.Lab.Stop) }

// Start is the script's start action.
func (t ScriptTarget) Start(name string) error { return t.lifecycle(name, board.OpStart, t.Lab.Start) }

// Restart is the script's restart action.
func (t ScriptTarget) Restart(name string) error {
	return t.lifecycle(name, board.OpRestart, t.Lab.Restart)
}

// RunScript plays actions against the lab, noting each on the timeline.
// It returns nil when the script ended (with or without quit).
func (l *Lab) RunScript(ctx context.Context, actions []script.Action) error {
	r := script.Runner{
		Target:   ScriptTarget{l},
		OnAction: func(a script.Action) { l.emit(board.Action{At: time.Now(), Text: "script: " + a.String()}) },
	}
	return r.Run(ctx, actions)
}
