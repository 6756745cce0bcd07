package board

import (
	"fmt"
	"time"
)

func (b *Board) stateLabel(p *proc) (string, Level) {
	if label, level, ok := b.holdLabel(p); ok {
		return label, level
	}
	if label := stateLabels[p.state]; label != nil {
		return label(b, p)
	}
	return string(p.state), LevelInfo
}

// holdLabel is what holds a process that is up: frozen, backpressure, or
// its records blocked; ok false when nothing does.
func (b *Board) holdLabel(p *proc) (string, Level, bool) {
	if p.frozen && p.pending == "" {
		return "frozen", LevelBad, true
	}
	settled := p.alive() && p.pending == ""
	if u := p.usage; settled && u != nil && !u.backpressureSince.IsZero() && (p.state == Running || p.state == Retrying) {
		// At most 18 cells: "backpressure 59m59s".
		return "backpressure " + shortDuration(b.now.Sub(u.backpressureSince)), LevelWarn, true
	}
	// Retrying a dead broker first, then refused by the live ones (the
	// metadata shows the ISR below min.insync.replicas): the refusal is
	// what holds it now.
	refused := p.state == Retrying && b.NotEnoughReplicas() != ""
	if f := p.producer; settled && f != nil && !f.blockedSince.IsZero() && (p.state == Running || refused) {
		// At most 18 cells: "blocked, 99999 buf".
		return fmt.Sprintf("blocked, %d buf", f.buffered), LevelBad, true
	}
	return "", 0, false
}

// fixedLabel is a state's label that depends on nothing else.
func fixedLabel(label string, level Level) func(*Board, *proc) (string, Level) {
	return func(*Board, *proc) (string, Level) { return label, level }
}

// stateLabels give each state its label as shown.
var stateLabels = map[State]func(*Board, *proc) (string, Level){
	Running: func(_ *Board, p *proc) (string, Level) {
		if p.name == Producer && p.producer.paused {
			return "running (paused)", LevelWarn
		}
		return "running", LevelGood
	},
	Replaying: func(b *Board, _ *proc) (string, Level) {
		_, _, frac := b.ReplayProgress()
		return fmt.Sprintf("replaying %d%%", percent(frac)), LevelWarn
	},
	Starting: fixedLabel("starting", LevelWarn),
	Retrying: func(_ *Board, p *proc) (string, Level) {
		if p.detail != "" {
			return "retrying " + p.detail, LevelWarn
		}
		return "retrying", LevelWarn
	},
	Stopping: fixedLabel("stopping", LevelWarn),
	Stopped:  fixedLabel("stopped", LevelInfo),
	Crashing: fixedLabel("crashing…", LevelBad),
	Crashed: func(_ *Board, p *proc) (string, Level) {
		if p.lastExit != nil {
			return "crashed (" + p.lastExit.Label() + ")", LevelBad
		}
		return "crashed", LevelBad
	},
	Restarting: fixedLabel("restarting", LevelWarn),
	Failed: func(_ *Board, p *proc) (string, Level) {
		if !p.alive() && p.detail != "" { // the launch failed: the cause
			return "failed: " + p.detail, LevelBad
		}
		return "failed", LevelBad
	},
}

// shortDuration is "0s", "42s", "3m05s", "42m" or, from 100 minutes, "99m+".
func shortDuration(d time.Duration) string {
	s := int(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 10*60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 100*60:
		return fmt.Sprintf("%dm", s/60)
	}
	return "99m+"
}

// percent shows progress without claiming 100% before it is done.
func percent(frac float64) int {
	p := int(frac * 100)
	return max(0, min(p, 99))
}
