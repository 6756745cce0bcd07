package ui

import (
	"context"
	"strconv"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

// Do serves the model's calls with the fake's methods, as the lab's
// handler table does: a toggle without a value goes the other way from
// the fake's own state.
func (f *fakeController) Do(_ context.Context, c action.Call) action.Result {
	r := c.Result(nil)
	switch c.Name {
	case action.Crash, action.Stop, action.Start, action.Restart:
		r.Err = f.act(c.Process, string(c.Name))
	case action.Freeze:
		frozen, err := f.ToggleFreeze(c.Process)
		r.Value, r.Err = map[bool]string{true: "frozen", false: "thawed"}[frozen], err
	case action.Pause:
		paused, err := f.TogglePause()
		r.Value, r.Err = map[bool]string{true: "pause", false: "resume"}[paused], err
	case action.CrashAt:
		r.Err = f.ArmCrash(c.Process, c.Value)
	case action.Mode:
		r.Value, r.Restarted, r.Err = f.ToggleUsageMode()
	case action.Reset:
		r.Value, r.Restarted, r.Err = f.ToggleUsageReset()
	case action.ResetLab:
		r.Err = f.ResetLab()
	case action.Acks:
		r.Value, r.Err = f.ToggleAcks()
	case action.Rebuild:
		r.Value, r.Err = f.CycleRebuild()
	case action.InjectBad:
		n, err := f.InjectBad(c.Count)
		r.Value, r.Err = strconv.Itoa(n), err
	case action.Scale, action.ScaleUp, action.ScaleDown:
		r.Value, r.Err = strconv.Itoa(c.Count), f.Scale(c.Count)
	case action.AddPartitions:
		r.Value, r.Err = strconv.Itoa(c.Count), f.AddPartitions(c.Count)
	default:
		r.Err = f.record(string(c.Name) + " " + c.Process)
	}
	return r
}
