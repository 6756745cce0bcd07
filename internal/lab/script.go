package lab

import (
	"context"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/script"
)

// RunScript plays actions against the lab (it is the script's Target: a
// script line and the key that does the same reach the same handler, Do),
// noting each on the timeline. It returns nil when the script ended (with
// or without quit).
func (l *Lab) RunScript(ctx context.Context, actions []script.Action) error {
	r := script.Runner{
		Target:   l,
		OnAction: func(a script.Action) { l.emit(board.Action{At: time.Now(), Text: "script: " + a.String()}) },
	}
	return r.Run(ctx, actions)
}
