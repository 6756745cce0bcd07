package lab

import (
	"context"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

// The tests' typed forms of the calls a key or a script line makes, each
// through Do: the toggles read the lab's own state, as the keys do.

func (l *Lab) do(name action.Name, process, value string) action.Result {
	return l.Do(context.Background(), action.Call{Name: name, Process: process, Value: value})
}

func (l *Lab) ToggleFreeze(name string) (bool, error) {
	r := l.do(action.Freeze, name, "")
	return r.Value == frozen, r.Err
}

func (l *Lab) TogglePause() (bool, error) {
	r := l.do(action.Pause, "", "")
	return r.Value == pause, r.Err
}

func (l *Lab) ToggleUsageMode() (string, bool, error) {
	r := l.do(action.Mode, "", "")
	return r.Value, r.Restarted, r.Err
}

func (l *Lab) ToggleUsageReset() (string, bool, error) {
	r := l.do(action.Reset, "", "")
	return r.Value, r.Restarted, r.Err
}

func (l *Lab) CycleRebuild() (string, error) {
	r := l.do(action.Rebuild, "", "")
	return r.Value, r.Err
}

func (l *Lab) SetRebuild(strategy string) error { return l.do(action.Rebuild, "", strategy).Err }
