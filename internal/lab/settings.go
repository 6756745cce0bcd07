package lab

import (
	"maps"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// settings are how the lab starts the lesson's processes from now on. The
// lab owns them (under mu), builds every command line from them, and
// announces each change to the board (board.Settings), which only shows
// them.
type settings struct {
	mode  lesson.Mode
	reset lesson.Reset
	// baseline counts reset-labs: each gives consumer-usage a group of its
	// own, so it starts at the end of the topic.
	baseline int
	rebuild  lesson.Rebuild
	acks     lesson.Acks
	// delays: each consumer-usage instance's effect delay (none: 0).
	delays map[string]time.Duration
}

// initialSettings are the settings cfg's flags ask for, with the same
// defaults the board shows.
func initialSettings(cfg Config) settings {
	return settings{
		mode:    lesson.Mode(orDefault(cfg.UsageMode, string(lesson.Naive))),
		reset:   lesson.Reset(orDefault(cfg.UsageReset, string(lesson.Latest))),
		rebuild: lesson.Rebuild(orDefault(cfg.Rebuild, string(lesson.Replay))),
		acks:    lesson.AcksAll,
		delays:  map[string]time.Duration{},
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// input is s as the board's input.
func (s settings) input(at time.Time) board.Settings {
	return board.Settings{At: at, UsageMode: string(s.mode), UsageReset: string(s.reset),
		Rebuild: string(s.rebuild), Acks: string(s.acks), EffectDelays: maps.Clone(s.delays)}
}

// settingsNow is a copy of the settings as of now.
func (l *Lab) settingsNow() settings {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.settings
	s.delays = maps.Clone(s.delays)
	return s
}

// changeSettings changes the settings with f and announces them, as one
// step: the board learns every change in the order it was made. acksErr is
// why the producer keeps its acks (nil: it did not fail).
func (l *Lab) changeSettings(acksErr error, f func(*settings)) {
	l.mu.Lock()
	f(&l.settings)
	in := l.settings.input(time.Now())
	in.AcksErr = acksErr
	l.mirror.Apply(in)
	l.notifyLocked()
	l.mu.Unlock()
	l.out <- in
}
