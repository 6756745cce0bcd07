package board

// Input is one value the board learns from: the sealed list below is every
// one there is. The dashboard (TUI, headless, a served hub) converts what the
// supervisor, the pollers and the audit report into these values and hands
// them to Board.Apply in arrival order. Each carries its own time: the board
// never reads a clock.
//
// Urgent says whether a screen must show the input within a frame (what the
// operator did and what happened to a process) or may gather it with others
// for a while (the pollers' readings, progress reports, clock ticks).
type Input interface {
	Urgent() bool
	input()
}

// What the supervised processes do and say:
//
//   - ProcStarted: the supervisor spawned a child (urgent).
//   - ProcExited: a child ended (urgent).
//   - ProcStatus: one status event a child wrote on stdout.
//   - ProcLog: one line a child wrote on stderr.
//   - ProcFrozen: a child was SIGSTOPped or SIGCONTed (health.go).
//   - ProcAdded, ProcRemoved: a consumer-usage instance joined or left the
//     lesson (scale.go).
//   - LaunchFailed: the lesson's processes could not be started (urgent).
func (ProcStarted) input()        {}
func (ProcStarted) Urgent() bool  { return true }
func (ProcExited) input()         {}
func (ProcExited) Urgent() bool   { return true }
func (ProcStatus) input()         {}
func (ProcStatus) Urgent() bool   { return false }
func (ProcLog) input()            {}
func (ProcLog) Urgent() bool      { return false }
func (ProcFrozen) input()         {}
func (ProcFrozen) Urgent() bool   { return false }
func (ProcAdded) input()          {}
func (ProcAdded) Urgent() bool    { return false }
func (ProcRemoved) input()        {}
func (ProcRemoved) Urgent() bool  { return false }
func (LaunchFailed) input()       {}
func (LaunchFailed) Urgent() bool { return true }

// The clock and the pollers' readings:
//
//   - Tick: the board's clock moves.
//   - Offsets: the topic's high watermarks.
//   - Committed: consumer-usage's group's committed offsets.
//   - Partitions: the topic's metadata.
//   - SensorsSnapshot: consumer-current's state.
//   - UsageSnapshot: a cut of the usage with the audit's expectation.
//   - TruthSnapshot: the independent audit of the topic.
//   - HealthProbe: a liveness probe of a process (health.go).
//   - AckedCheck: the producer's acknowledged records checked against the
//     topic (acks.go).
func (Tick) input()                  {}
func (Tick) Urgent() bool            { return false }
func (Offsets) input()               {}
func (Offsets) Urgent() bool         { return false }
func (Committed) input()             {}
func (Committed) Urgent() bool       { return false }
func (Partitions) input()            {}
func (Partitions) Urgent() bool      { return false }
func (SensorsSnapshot) input()       {}
func (SensorsSnapshot) Urgent() bool { return false }
func (UsageSnapshot) input()         {}
func (UsageSnapshot) Urgent() bool   { return false }
func (TruthSnapshot) input()         {}
func (TruthSnapshot) Urgent() bool   { return false }
func (HealthProbe) input()           {}
func (HealthProbe) Urgent() bool     { return false }
func (AckedCheck) input()            {}
func (AckedCheck) Urgent() bool      { return false }

// What a person or a script asked for:
//
//   - Action: something done, for the timeline (urgent).
//   - Settings: the run's settings as the lab owns them, whole, at every
//     change (settings.go; urgent). The lab sends only these; Mode,
//     Rebuild, AcksSetting and EffectDelaySet are the steps the board
//     shows them in.
//   - Mode: how consumer-usage starts from now on (urgent).
//   - Rebuild: how consumer-current rebuilds from its next start (rebuild.go).
//   - Request: an operation asked of the supervisor (urgent).
//   - RequestDone: the supervisor's answer to it (urgent).
//   - EffectDelaySet: consumer-usage's effect delay asked for (scale.go).
//   - AcksSetting: the producer's acks setting asked for (acks.go).
//   - PartitionsAdded: the topic grew (moves.go).
//   - TopicRecreated: the topic was deleted and created again (moves.go).
//   - RetentionSet: the topic got a short retention (retention.go).
func (Action) input()                {}
func (Action) Urgent() bool          { return true }
func (Settings) input()              {}
func (Settings) Urgent() bool        { return true }
func (Mode) input()                  {}
func (Mode) Urgent() bool            { return true }
func (Rebuild) input()               {}
func (Rebuild) Urgent() bool         { return false }
func (Request) input()               {}
func (Request) Urgent() bool         { return true }
func (RequestDone) input()           {}
func (RequestDone) Urgent() bool     { return true }
func (EffectDelaySet) input()        {}
func (EffectDelaySet) Urgent() bool  { return false }
func (AcksSetting) input()           {}
func (AcksSetting) Urgent() bool     { return false }
func (PartitionsAdded) input()       {}
func (PartitionsAdded) Urgent() bool { return false }
func (TopicRecreated) input()        {}
func (TopicRecreated) Urgent() bool  { return false }

// Narration travels with the inputs to the front end, in their order, and
// the board does not apply it: the running scenario's narration
// (scenario.Progress; the package is above this one, hence the type
// parameter). Urgent: a scenario's step shows at once.
type Narration[T any] struct{ Step T }

func (Narration[T]) input()       {}
func (Narration[T]) Urgent() bool { return true }
func (Narration[T]) frontEnds()   {}

// frontEnds is an input that only passes the board on its way to a front end.
type frontEnds interface{ frontEnds() }
