// Package lesson holds the lab's domain words, typed, in one place: how
// consumer-usage runs (mode), where a new group of it starts reading
// (reset), where it can be made to crash (crash points), and how
// consumer-current rebuilds its state at a start (rebuild strategy). Flags, the
// script language, the keys, the board and the consumers all parse and
// name them through here.
package lesson

import (
	"fmt"
	"slices"
	"strings"
)

// Mode selects consumer-usage's behaviour.
type Mode string

const (
	// Naive is the seed article's code: delta against the checkpoint in
	// memory, insert, then checkpoint, with an auto commit every second.
	Naive Mode = "naive"
	// Guarded commits only offsets whose effect is durable, and writes each
	// message's effect at most once.
	Guarded Mode = "guarded"
)

// Modes lists the modes in the order the m key cycles them.
var Modes = []Mode{Naive, Guarded}

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	return parse(s, "mode", Modes)
}

// Other returns the mode the m key switches to.
func (m Mode) Other() Mode { return following(Modes, m) }

// Reset is auto.offset.reset: where a group without commits starts.
type Reset string

const (
	// Latest: consumer-usage's fixed group; without commits it starts at the end.
	Latest Reset = "latest"
	// Earliest: a fresh group at every start, so the whole topic is replayed.
	Earliest Reset = "earliest"
)

// Resets lists the resets in the order the e key cycles them.
var Resets = []Reset{Latest, Earliest}

// ParseReset validates an offset reset name.
func ParseReset(s string) (Reset, error) {
	return parse(s, "offset reset", Resets)
}

// Other returns the reset the e key switches to.
func (r Reset) Other() Reset { return following(Resets, r) }

// CrashPoint is where in the handling of one message consumer-usage can be
// made to SIGKILL itself.
type CrashPoint string

const (
	// NoCrashPoint disarms.
	NoCrashPoint CrashPoint = "none"
	// AfterDelta: the usage record is written, the checkpoint is not. Only
	// messages that write a usage record reach it.
	AfterDelta CrashPoint = "after-delta"
	// AfterCheckpoint: the checkpoint is written, the offset is not stored
	// or committed yet.
	AfterCheckpoint CrashPoint = "after-checkpoint"
)

// CrashPoints lists the points that can be armed.
var CrashPoints = []CrashPoint{AfterDelta, AfterCheckpoint}

// crashPointCycle is the c key's cycle, "none" first.
var crashPointCycle = append([]CrashPoint{NoCrashPoint}, CrashPoints...)

// ParseCrashPoint validates a crash point name; "none" disarms.
func ParseCrashPoint(s string) (CrashPoint, error) {
	return parse(s, "crash point", crashPointCycle)
}

// ParseArmablePoint validates the name of a point that can be armed.
func ParseArmablePoint(s string) (CrashPoint, error) {
	return parse(s, "crash point", CrashPoints)
}

// NextCrashPoint is the c key's cycle: none → after-delta →
// after-checkpoint → none. An unknown current point counts as none.
func NextCrashPoint(cur CrashPoint) CrashPoint { return following(crashPointCycle, cur) }

// Rebuild is how consumer-current rebuilds its state at a start.
type Rebuild string

const (
	// Replay is the seed's strategy: a fresh group, earliest, the whole
	// topic read again.
	Replay Rebuild = "replay"
	// Snapshot loads the state and the offsets it covers from a file the
	// process writes, then reads only what follows those offsets.
	Snapshot Rebuild = "snapshot"
	// Changelog reads each sensor's latest state back from a compacted topic
	// the process publishes, then the tail of the topic.
	Changelog Rebuild = "changelog"
)

// Rebuilds lists the strategies in the order the rebuild key cycles them.
var Rebuilds = []Rebuild{Replay, Snapshot, Changelog}

// ParseRebuild validates a rebuild strategy name.
func ParseRebuild(s string) (Rebuild, error) {
	return parse(s, "rebuild strategy", Rebuilds)
}

// Next is the strategy the rebuild key switches to: replay → snapshot →
// changelog → replay. An unknown one counts as replay.
func (r Rebuild) Next() Rebuild { return following(Rebuilds, r) }

// Words are values as plain strings (usage texts, grammars).
func Words[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func parse[T ~string](s, what string, valid []T) (T, error) {
	for _, v := range valid {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown %s %q (want %s)", what, s, strings.Join(Words(valid), " or "))
}

// following is the value after v in values, the first after the last; a
// v not in values counts as the first. Every key that switches a setting
// steps through its list with it.
func following[T comparable](values []T, v T) T {
	return values[(max(slices.Index(values, v), 0)+1)%len(values)]
}

// MidSnapshot is consumer-current's one crash point: its next snapshot
// write SIGKILLs the process with half of the new file written, before
// the file takes the old one's place.
const MidSnapshot CrashPoint = "mid-snapshot"
