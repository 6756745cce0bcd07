package board

import (
	"time"
)

// Settings: how the lab starts the lesson's processes from now on, all of
// it, announced at every change. The lab owns the settings and builds the
// command lines from them; the board only shows them, and puts on the
// timeline what changed since the last announcement.
type Settings struct {
	At time.Time
	// UsageMode ("naive", "guarded") and UsageReset ("latest", "earliest"):
	// consumer-usage's.
	UsageMode, UsageReset string
	// Rebuild: how consumer-current rebuilds at a start.
	Rebuild string
	// Acks: the producer's acks ("all", "1").
	Acks string
	// AcksErr: the running producer did not switch; Acks is the setting it
	// keeps.
	AcksErr error
	// EffectDelays: how long each consumer-usage instance holds its usage
	// writes (an instance not named: none).
	EffectDelays map[string]time.Duration
}

// settings shows s, each change as its own input would.
func (b *Board) settings(s Settings) {
	b.setMode(Mode{At: s.At, UsageMode: s.UsageMode, UsageReset: s.UsageReset})
	b.setRebuild(Rebuild{At: s.At, Strategy: s.Rebuild})
	if s.AcksErr != nil || s.Acks != b.AcksSetting() {
		b.acksSetting(AcksSetting{At: s.At, Acks: s.Acks, Err: s.AcksErr})
	}
	for _, name := range b.UsageInstances() {
		if p := b.procs[name]; p != nil && p.usage != nil && s.EffectDelays[name] != p.usage.delayCfg {
			d := s.EffectDelays[name]
			b.effectDelaySet(EffectDelaySet{Name: name, At: s.At, Delay: d})
		}
	}
}
