// Package actiontest is for fakes of the lab in tests: a fake that records
// one typed method per operation (crash NAME, mode NAME VALUE) serves
// action calls through Do.
package actiontest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

// Methods is a fake lab's typed operations, one per script verb.
type Methods interface {
	Crash(name string) error
	Stop(name string) error
	Start(name string) error
	Restart(name string) error
	Pause() error
	Resume() error
	Freeze(name string) error
	Thaw(name string) error
	ArmCrash(name, point string) error
	SetMode(name, mode string) error
	SetReset(name, reset string) error
	ResetLab() error
	InjectBad(n int) (delivered int, err error)
	History(ctx context.Context, d time.Duration) error
	GrowHistory(ctx context.Context, n int64) error
	PublishHistory(ctx context.Context, n int) error
	SetRebuild(strategy string) error
	Scale(n int) error
	SetEffectDelay(name string, d time.Duration) error
	SetAcks(acks string) error
	AddPartitions(n int) error
	RecreateTopic(ctx context.Context) error
	SetRetention(ctx context.Context, d time.Duration) error
	Park(sensor string) error
	Quit()
}

// Do carries out c with m's method for it. A toggle must name its value
// (a fake has no state to toggle from): pause/resume, frozen/thawed.
func Do(ctx context.Context, m Methods, c action.Call) action.Result {
	r := c.Result(nil)
	r.Err = do(ctx, m, c, &r)
	return r
}

func do(ctx context.Context, m Methods, c action.Call, r *action.Result) error {
	p, v := c.Process, c.Value
	switch c.Name {
	case action.Crash:
		return m.Crash(p)
	case action.Stop:
		return m.Stop(p)
	case action.Start:
		return m.Start(p)
	case action.Restart:
		return m.Restart(p)
	case action.Pause, action.Resume:
		if c.Name == action.Resume || v == "resume" {
			return m.Resume()
		}
		return m.Pause()
	case action.Freeze, action.Thaw:
		if c.Name == action.Thaw || v == "thawed" {
			return m.Thaw(p)
		}
		return m.Freeze(p)
	case action.CrashAt:
		return m.ArmCrash(p, v)
	case action.Mode:
		return m.SetMode(p, v)
	case action.Reset:
		return m.SetReset(p, v)
	case action.ResetLab:
		return m.ResetLab()
	case action.Quit:
		m.Quit()
		return nil
	}
	return doMore(ctx, m, c, r)
}

func doMore(ctx context.Context, m Methods, c action.Call, r *action.Result) error {
	switch c.Name {
	case action.InjectBad:
		n, err := m.InjectBad(c.Count)
		r.Value = strconv.Itoa(n)
		return err
	case action.History:
		if c.Count > 0 {
			return m.GrowHistory(ctx, int64(c.Count))
		}
		return m.History(ctx, c.Duration)
	case action.Backlog:
		return m.PublishHistory(ctx, c.Count)
	case action.Rebuild:
		return m.SetRebuild(c.Value)
	case action.Scale:
		r.Value = strconv.Itoa(c.Count)
		return m.Scale(c.Count)
	case action.EffectDelay:
		return m.SetEffectDelay(c.Process, c.Duration)
	case action.Acks:
		return m.SetAcks(c.Value)
	case action.AddPartitions:
		return m.AddPartitions(c.Count)
	case action.RecreateTopic:
		return m.RecreateTopic(ctx)
	case action.Retention:
		r.Value = c.Duration.String()
		return m.SetRetention(ctx, c.Duration)
	case action.Park:
		return m.Park(c.Value)
	}
	return fmt.Errorf("%s: no fake for it", c.Name)
}
