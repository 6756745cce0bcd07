package board

import (
	"slices"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// ProcView is one process row, everything a view needs, already in words:
// its lifecycle, and what its role reports (Producer, Current, Usage: nil
// for the other roles).
type ProcView struct {
	Name     string
	Key      int    // jump key 1–6, 0 when the name is not canonical
	Strategy string // recovery strategy in words
	State    State
	// StateLabel is the state as shown: "replaying 40%", "crashed (SIGKILL)", "crashing…".
	StateLabel string
	Level      Level
	Detail     string // the endpoint it is retrying, or its last error
	PID        int
	Alive      bool
	Uptime     time.Duration
	Starts     int
	Crashes    int
	LastExit   *Exit
	Pending    string

	// GroupID: the consumer group it runs in; Armed: an armed crash point.
	GroupID string
	Armed   string

	Lag     Lag
	History []int64 // lag samples, oldest first; -1 = unknown
	// LagStatus: the lag judged over the last StatusWindow samples.
	LagStatus LagStatus

	// What the current incarnation reported about itself (Progress
	// events); zero before its first report.
	StartedAt time.Time
	Positions []status.Position
	Processed int64
	Invalid   int64
	// LastInvalid is the reason of the latest invalid message this
	// incarnation skipped ("" before any).
	LastInvalid string
	// LastCrashPoint is the latest crash point the process reached (any
	// incarnation), nil if none.
	LastCrashPoint *CrashPointHit
	// LastError is the reason of the latest Error event since it started.
	LastError string

	// Frozen: SIGSTOPped (State is Frozen unless a request is pending).
	// FrozenAt and ThawedAt: the incarnation's latest freeze and thaw
	// (zero: none).
	Frozen             bool
	FrozenAt, ThawedAt time.Time
	Health             HealthView

	Producer *ProducerView
	Current  *CurrentView
	Usage    *UsageProcView
}

// ProducerView is what the producer reports about its publishing.
type ProducerView struct {
	Produced int64
	Paused   bool
	// Acks: the producer's acks setting (the running one's, else the one
	// it starts with).
	Acks string
	// PauseAsked is OpPause or OpResume while the producer has not yet
	// confirmed it.
	PauseAsked string
	// Blocked: how long its records have not been acknowledged (0: they
	// are), Buffered how many it holds, BlockedCause why when known: the
	// metadata's "NOT_ENOUGH_REPLICAS (isr 1 < min.insync.replicas 2)",
	// else the error the producer reported.
	Blocked      time.Duration
	Buffered     int64
	BlockedCause string
}

// CurrentView is what consumer-current reports about its rebuild.
type CurrentView struct {
	// CaughtUp, with the messages and the time it took, as its CaughtUp
	// event said; false before it, and once it exited.
	CaughtUp         bool
	CaughtUpMessages int64
	CaughtUpMillis   int64
	// Rebuild is how it rebuilds from its next start, Prepares what its
	// running incarnation keeps up for it ("" before it says), LastRebuild
	// how its latest incarnation rebuilt (nil before one announced it);
	// Prepared the strategy it saved once since it began to prepare it.
	Rebuild     string
	Prepares    string
	Prepared    string
	LastRebuild *RebuildRun
	// ReplayShown: how long its rebuild showed as replaying (the row's
	// "replaying N%", the sensors panel's progress bar), from its first
	// progress report with positions to CaughtUp, on the process's own
	// clock; 0 when it caught up without one.
	ReplayShown time.Duration
}

// UsageProcView is what a consumer-usage instance runs with and reports
// (UsageView is the usage panel).
type UsageProcView struct {
	// Mode and Reset: what it runs with (or will run with at its next
	// start); the user's command has mode "yours" and no reset of the
	// lab's (Command says what it runs).
	Mode, Reset string
	Command     string
	// Redelivered: messages delivered again at its last start; -1 until
	// it is known.
	Redelivered int64
	// Backpressure is how long it has not been taking new messages
	// because the store is down or slow (0: it takes them), and
	// BackpressureReason why.
	Backpressure       time.Duration
	BackpressureReason string

	// Instance is n of UsageInstance(n); Partitions the partitions it owns
	// now (nil: not known, empty: none); Member and Generation of its
	// latest rebalance; Prevented (second effects refused) and Late
	// (records written after their partition was revoked) since it
	// started; EffectDelay how long it holds each write (as it reported
	// it, else as asked for its next start).
	Instance    int
	Partitions  []int32
	Member      string
	Generation  int32
	Prevented   int64
	Late        int64
	EffectDelay time.Duration
	// Held: its writes held by the effect delay (the latest per partition
	// since the delay last changed); Late writes its latest late write per
	// partition; LastAssign and LastRevoke its latest rebalance, as it
	// reported them (all since it started).
	Held       []Write
	LateWrites []Write
	LastAssign *Rebalance
	LastRevoke *Rebalance
}

// PausedOrPausing: the producer is paused, or a pause was asked for and
// not yet confirmed (a resume asked for counts as publishing); false for
// no producer.
func (v *ProducerView) PausedOrPausing() bool {
	if v == nil {
		return false
	}
	switch v.PauseAsked {
	case OpPause:
		return true
	case OpResume:
		return false
	}
	return v.Paused
}

// Write is a usage write of a consumer-usage instance, as its events told:
// Count messages from Partition/Offset, Refused of them refused by the
// store as second effects.
type Write struct {
	At        time.Time
	Partition int32
	Offset    int64
	Count     int64
	Refused   int64
}

// Rebalance is a consumer-usage instance's assignment or revoke: the
// partitions, the generation, where each assigned partition starts (assign),
// the messages in flight (revoke), and how long it owned nothing (assign).
type Rebalance struct {
	At         time.Time
	Partitions []int32
	Generation int32
	Start      map[int32]int64
	InFlight   int64
	Took       time.Duration
}

// CrashPointHit is a crash point a process reported reaching, just before
// it killed itself.
type CrashPointHit struct {
	At        time.Time
	Point     string // "after-delta" or "after-checkpoint"
	Partition int32
	Offset    int64
}

// ReadFrom is where the current incarnation of consumer-usage began
// reading, summed over its partitions: every message it handled moved one
// position by one, so the sum of its positions minus the messages it
// processed or skipped as invalid (consumer-usage counts them apart) is the
// sum of its start offsets. It tells a resume from the
// committed offsets from a jump to the end (latest) or a replay from the
// beginning (earliest). ok is false before a report with every position
// known.
func (v ProcView) ReadFrom() (offset int64, ok bool) {
	if len(v.Positions) == 0 {
		return 0, false
	}
	var sum int64
	for _, p := range v.Positions {
		if p.Offset < 0 {
			return 0, false
		}
		sum += p.Offset
	}
	return sum - v.Processed - v.Invalid, true
}

// Processes returns the process rows in display order.
func (b *Board) Processes() []ProcView {
	out := make([]ProcView, 0, len(b.order))
	for _, n := range b.order {
		out = append(out, b.Process(n))
	}
	return out
}

// Process returns one process row (zero value if unknown).
func (b *Board) Process(name string) ProcView {
	p := b.procs[name]
	if p == nil {
		return absentView(name)
	}
	v := ProcView{
		Name:      name,
		Strategy:  b.strategy(p),
		State:     p.state,
		Detail:    p.detail,
		PID:       p.pid,
		Alive:     p.alive(),
		Starts:    p.starts,
		Crashes:   p.crashes,
		LastExit:  p.lastExit,
		Pending:   p.pending,
		GroupID:   p.groupID,
		Armed:     p.armed,
		Lag:       b.lagOf(name),
		History:   append([]int64(nil), b.lagHist[name]...),
		LagStatus: b.lagStatus(name),

		Positions:      append([]status.Position(nil), p.positions...),
		Processed:      p.processed,
		Invalid:        p.invalid,
		LastInvalid:    p.lastInvalid,
		LastCrashPoint: p.lastCrash,
		LastError:      p.lastError,
		Frozen:         p.frozen,
		Health:         b.healthOf(p),
	}
	if p.frozen && p.pending == "" {
		v.State = Frozen
	}
	if p.alive() {
		v.FrozenAt, v.ThawedAt = p.frozenAt, p.thawedAt
	}
	if p.alive() {
		v.StartedAt = p.startedAt
	}
	v.Key = slices.Index(Canonical, name) + 1 // 0 when it has no key
	if p.alive() && !p.startedAt.IsZero() && b.now.After(p.startedAt) {
		v.Uptime = b.now.Sub(p.startedAt)
	}
	v.Producer, v.Current, v.Usage = b.producerView(p), b.currentView(p), b.usageView(p)
	v.StateLabel, v.Level = b.stateLabel(p)
	return v
}

// absentView is the view of a process the board does not have (a
// consumer-usage instance scaled away, a role not in this lesson): the
// zero view, with its role's view empty rather than nil, so a read of a
// role's fact reads zero as it did before the facts had types of their own.
func absentView(name string) ProcView {
	var v ProcView
	blank := newProc(name, "")
	if blank.producer != nil {
		v.Producer = &ProducerView{}
	}
	if blank.current != nil {
		v.Current = &CurrentView{}
	}
	if blank.usage != nil {
		v.Usage = &UsageProcView{}
	}
	return v
}

// producerView is what the producer reported; nil for another role.
func (b *Board) producerView(p *proc) *ProducerView {
	f := p.producer
	if f == nil {
		return nil
	}
	v := &ProducerView{Produced: f.produced, Paused: f.paused, PauseAsked: f.pauseAsked}
	if p.name == Producer {
		v.Acks = b.producerAcks()
	}
	if p.alive() && !f.blockedSince.IsZero() {
		v.Blocked = max(b.now.Sub(f.blockedSince), time.Millisecond)
		v.Buffered, v.BlockedCause = f.buffered, b.blockedCause(p)
	}
	return v
}

// currentView is what consumer-current reported and rebuilds with; nil for
// another role.
func (b *Board) currentView(p *proc) *CurrentView {
	f := p.current
	if f == nil {
		return nil
	}
	v := &CurrentView{CaughtUp: f.caughtUp, CaughtUpMessages: f.caughtUpMsgs, CaughtUpMillis: f.caughtUpMs,
		ReplayShown: f.replayShown}
	v.Rebuild, v.LastRebuild = b.rebuild, b.currentRebuild(p)
	if p.alive() {
		v.Prepares = f.prepares
		if f.prepared == f.prepares {
			v.Prepared = f.prepared
		}
	}
	return v
}

// usageView is what consumer-usage instance p reported and runs with (or
// will run with at its next start); nil for another role.
func (b *Board) usageView(p *proc) *UsageProcView {
	f := p.usage
	if f == nil {
		return nil
	}
	n, _ := UsageInstanceNumber(p.name)
	v := &UsageProcView{Instance: n, Redelivered: f.redelivered}
	v.Partitions = partitionsOf(p)
	v.Member, v.Generation = f.member, f.generation
	v.Prevented, v.Late = f.prevented, f.late
	v.Held, v.LateWrites, v.LastAssign, v.LastRevoke = slices.Clone(f.held), slices.Clone(f.lates), f.lastAssign, f.lastRevoke
	v.EffectDelay = f.delayCfg
	if p.alive() && f.delayKnown {
		v.EffectDelay = f.delay
	}
	v.Mode, v.Reset = b.mode, b.reset
	if p.alive() && p.mode != "" {
		v.Mode = p.mode
	}
	if p.alive() && p.reset != "" {
		v.Reset = p.reset
	}
	if b.cfg.UsageCmd != "" {
		v.Mode, v.Reset, v.Command = "yours", "", b.cfg.UsageCmd
	}
	if p.alive() && !f.backpressureSince.IsZero() {
		v.Backpressure = max(b.now.Sub(f.backpressureSince), time.Millisecond)
		v.BackpressureReason = f.backpressureReason
	}
	return v
}

// The narrow reads below answer one question about a process without
// building its row: the lab's waits ask them at every input.

// PID is the process's pid; 0 when it is not running or unknown.
func (b *Board) PID(name string) int {
	if p := b.procs[name]; p != nil {
		return p.pid
	}
	return 0
}

// Alive reports whether the process is running.
func (b *Board) Alive(name string) bool { return b.PID(name) != 0 }

// Frozen reports whether the process is SIGSTOPped.
func (b *Board) Frozen(name string) bool {
	p := b.procs[name]
	return p != nil && p.frozen
}

// LastExit is how the process last ended; nil before it ever did.
func (b *Board) LastExit(name string) *Exit {
	if p := b.procs[name]; p != nil {
		return p.lastExit
	}
	return nil
}

// GroupID is the consumer group the process runs in ("" before it said).
func (b *Board) GroupID(name string) string {
	if p := b.procs[name]; p != nil {
		return p.groupID
	}
	return ""
}

// HoldsWrites reports whether consumer-usage instance name holds a write
// for its effect delay.
func (b *Board) HoldsWrites(name string) bool {
	p := b.procs[name]
	return p != nil && p.usage != nil && len(p.usage.held) > 0
}

// Blocked reports whether the producer's records are not being
// acknowledged while it runs.
func (b *Board) Blocked(name string) bool {
	p := b.procs[name]
	return p != nil && p.alive() && p.producer != nil && !p.producer.blockedSince.IsZero()
}

// strategy is the process's role's strategy in words (its running
// incarnation's offset reset, else the next start's).
func (b *Board) strategy(p *proc) string {
	if IsUsage(p.name) && b.cfg.UsageCmd != "" {
		return "yours"
	}
	r, n, _ := role.Of(p.name)
	reset := b.reset
	if p.alive() && p.reset != "" {
		reset = p.reset
	}
	return r.Strategy.Say(reset, n)
}
