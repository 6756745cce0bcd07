package board

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// statusEvent is one status event of a process as its handler takes it.
// settled: the board believes the process alive with no request pending;
// events of a process the board believes dead come from its last moments
// (a CrashPoint before the SIGKILL, say): history, no state.
type statusEvent struct {
	p       *proc
	at      time.Time
	e       status.Event
	settled bool
}

// statusHandlers handle each kind of status event; a kind without one
// changes nothing.
var statusHandlers = map[status.Type]func(*Board, statusEvent){
	status.Started:           (*Board).onStarted,
	status.Listening:         (*Board).onListening,
	status.Connected:         (*Board).onConnected,
	status.Retrying:          (*Board).onRetrying,
	status.Assigned:          (*Board).onRebalance,
	status.Revoked:           (*Board).onRebalance,
	status.Progress:          (*Board).onProgress,
	status.CaughtUp:          (*Board).onCaughtUp,
	status.InvalidMessage:    (*Board).onInvalidMessage,
	status.BadInjected:       (*Board).onBadInjected,
	status.CrashPointArmed:   (*Board).onCrashPointArmed,
	status.CrashPoint:        (*Board).onCrashPoint,
	status.Paused:            (*Board).onPaused,
	status.Resumed:           (*Board).onResumed,
	status.Error:             (*Board).onError,
	status.Recovering:        (*Board).onRecovering,
	status.Blocked:           (*Board).onBlocked,
	status.Unblocked:         (*Board).onUnblocked,
	status.Backpressure:      (*Board).onBackpressure,
	status.BackpressureEnded: (*Board).onBackpressureEnded,
	status.Stopping:          (*Board).onStopping,
	status.Rebuild:           (*Board).onRebuild,
	status.Prepares:          (*Board).onPrepares,
	status.Prepared:          (*Board).onPrepared,
	status.AcksSet:           (*Board).onAcksSet,
	status.AckedLogFailed:    (*Board).onAckedLogFailed,
}

func (b *Board) procStatus(v ProcStatus) {
	p := b.procs[v.Name]
	if p == nil {
		return
	}
	at := v.At
	if at.IsZero() {
		at = v.Event.Time
	}
	if IsUsage(v.Name) && b.scaleStatus(p, at, v.Event) {
		return
	}
	if handle := statusHandlers[v.Event.Type]; handle != nil {
		handle(b, statusEvent{p: p, at: at, e: v.Event, settled: p.alive() && p.pending == ""})
	}
	if f := p.current; f != nil && p.state == Replaying && f.replayFrom.IsZero() {
		f.replayFrom = at
	}
}

// say puts an event of the process on the timeline.
func (b *Board) say(s statusEvent, level Level, text string) { b.event(s.at, s.p.name, level, text) }

func (b *Board) onStarted(s statusEvent) {
	p, e := s.p, s.e
	if e.Acks != "" {
		b.acks.running = e.Acks
	}
	p.mode, p.reset, p.groupID = e.Mode, e.Reset, e.GroupID
	p.newGroup = e.Reset == "earliest" && e.GroupID != "" && !b.groupsSeen[e.GroupID]
	if e.GroupID != "" {
		b.groupsSeen[e.GroupID] = true
	}
	var parts []string
	if e.Mode != "" {
		parts = append(parts, "mode "+e.Mode)
	}
	if e.Reset != "" {
		parts = append(parts, "reset "+e.Reset)
	}
	if e.GroupID != "" {
		parts = append(parts, "group "+e.GroupID)
	}
	if len(parts) > 0 {
		b.say(s, LevelInfo, "running with "+strings.Join(parts, ", "))
	}
}

// onListening notes the address of an endpoint: its HTTP one, or the
// broker's or store's the dashboard's clients use.
func (b *Board) onListening(s statusEvent) {
	p, e := s.p, s.e
	r := role.Lookup(p.name)
	switch {
	case e.Endpoint == "http":
		p.httpAddr = e.Addr
	case e.Endpoint != r.Serves:
	case e.Endpoint == "kafka" && r.Numbered:
		b.clusterListening(p.name, e.Addr)
	case e.Endpoint == "kafka":
		b.cfg.Brokers = e.Addr
	case e.Endpoint == "mongo":
		b.cfg.Mongo = "mongodb://" + e.Addr
	}
	if s.settled && r.UpOnListen && p.state != Retrying {
		p.state = Running
	}
	b.say(s, LevelInfo, fmt.Sprintf("listening (%s) on %s", e.Endpoint, e.Addr))
}

func (b *Board) onConnected(s statusEvent) {
	p, e := s.p, s.e
	if s.settled && (p.state == Starting || p.state == Retrying) {
		p.state = p.upState()
		p.detail = ""
	}
	b.say(s, LevelInfo, strings.TrimSpace(fmt.Sprintf("connected to %s %s", e.Endpoint, e.Addr)))
}

func (b *Board) onRetrying(s statusEvent) {
	p, e := s.p, s.e
	p.detail = e.Endpoint
	if s.settled && p.state != Retrying {
		p.state = Retrying
		b.say(s, LevelWarn, fmt.Sprintf("retrying %s %s: %s", e.Endpoint, e.Addr, plainError(e.Endpoint, e.Error)))
	}
}

// onRebalance takes an Assigned or Revoked.
func (b *Board) onRebalance(s statusEvent) {
	p, e := s.p, s.e
	assigned := e.Type == status.Assigned
	if e.Member == "" && e.Generation == 0 { // scaleStatus told the others
		b.say(s, LevelInfo, fmt.Sprintf("rebalance: %s partitions %s", e.Type, partitionList(e.Partitions)))
	}
	p.revoked = !assigned
	if !assigned {
		return
	}
	b.noteAssigned(s)
	if f := p.usage; f != nil && e.First {
		f.redelivered = e.Redelivered
	}
	if e.First || e.Redelivered > 0 {
		b.say(s, redeliveryLevel(e.Redelivered), redeliveryText(e.Redelivered, p.newGroup && e.First))
	}
	if s.settled && (p.state == Starting || p.state == Retrying) {
		p.state = p.upState()
	}
}

func (b *Board) onProgress(s statusEvent) {
	p, e := s.p, s.e
	if len(e.Positions) > 0 {
		p.positions = append(p.positions[:0:0], e.Positions...)
		p.positionsAt = s.at
	}
	p.processed, p.invalid = e.Processed, e.Invalid
	if role.Lookup(p.name).Lag == role.LagSent {
		p.producer.produced = e.Produced
		if e.Sensors > 0 {
			b.fleet = e.Sensors
		}
		b.producerWaiting(s)
	}
	if IsUsage(p.name) {
		p.usage.prevented, p.usage.late = e.Prevented, e.Late
	}
	// A role that retried says Connected when it is back; its
	// progress reports while it retries change nothing.
	if s.settled && (p.state == Starting || p.state == Replaying) {
		p.state = p.upState()
		p.detail = ""
	}
}

func (b *Board) onCaughtUp(s statusEvent) {
	p, e := s.p, s.e
	if f := p.current; f != nil {
		f.caughtUp = true
		f.caughtUpMsgs, f.caughtUpMs = e.Processed, e.Millis
		if !f.replayFrom.IsZero() {
			f.replayShown = max(0, s.at.Sub(f.replayFrom))
		}
	}
	if s.settled {
		p.state = Running
	}
	text := fmt.Sprintf("caught up after %s in %.1f s", Plural(e.Processed, "message"), float64(e.Millis)/1000)
	if r := b.caughtUpRebuild(p, e.Processed, e.Millis, e.History); r != "" && b.currentRebuild(p).Method() != "replay" {
		text = "caught up: " + r
	}
	b.say(s, LevelGood, text)
}

// onInvalidMessage counts the message at once (the next Progress carries
// the process's own count, which includes it): a report taken as soon as
// the consumers caught up has every invalid message they skipped.
func (b *Board) onInvalidMessage(s statusEvent) {
	s.p.invalid++
	s.p.lastInvalid = s.e.Error
	b.invalidEvent(s.at, s.p.name, s.e)
}

func (b *Board) onBadInjected(s statusEvent) {
	e := s.e
	if f := s.p.producer; f != nil && e.Produced > 0 {
		f.produced = e.Produced // sent counts them: the topic grew by them
	}
	text := fmt.Sprintf("published %d malformed records on purpose (poison for the consumers)", e.Injected)
	level := LevelWarn
	if e.Error != "" {
		text += ": " + e.Error
		level = LevelBad
	}
	b.say(s, level, text)
}

func (b *Board) onCrashPointArmed(s statusEvent) {
	if s.e.Point == "none" {
		s.p.armed = ""
		b.say(s, LevelInfo, "crash point disarmed")
		return
	}
	s.p.armed = s.e.Point
	if s.e.Point == string(lesson.MidSnapshot) {
		b.say(s, LevelWarn, "crash point mid-snapshot armed: SIGKILLs itself in its next snapshot write")
		return
	}
	b.say(s, LevelWarn, fmt.Sprintf("crash point %s armed: SIGKILLs itself at the next message that reaches it", s.e.Point))
}

func (b *Board) onCrashPoint(s statusEvent) {
	e := s.e
	s.p.armed = ""
	s.p.lastCrash = &CrashPointHit{At: s.at, Point: e.Point, Partition: e.Partition, Offset: e.Offset}
	if e.Point == string(lesson.MidSnapshot) {
		b.say(s, LevelBad, "crash point mid-snapshot reached: killing itself (SIGKILL) with half of the new snapshot written; the previous one stays whole")
		return
	}
	b.say(s, LevelBad, fmt.Sprintf("crash point %s reached at partition %d offset %d: killing itself (SIGKILL)", e.Point, e.Partition, e.Offset))
}

func (b *Board) onPaused(s statusEvent) {
	if f := s.p.producer; f != nil {
		f.paused, f.pauseAsked = true, ""
		f.quietSince = s.at
	}
	b.say(s, LevelWarn, "paused publishing")
}

func (b *Board) onResumed(s statusEvent) {
	if f := s.p.producer; f != nil {
		f.paused, f.pauseAsked = false, ""
	}
	b.say(s, LevelGood, "resumed publishing")
}

func (b *Board) onError(s statusEvent) {
	p := s.p
	p.detail = s.e.Error
	p.lastError = s.e.Error
	if s.settled {
		p.state = Failed
	}
	b.say(s, LevelBad, "failed: "+s.e.Error)
}

func (b *Board) onRecovering(s statusEvent) {
	s.p.detail = s.e.Endpoint
	if s.settled {
		s.p.state = Retrying
	}
	b.say(s, LevelWarn, fmt.Sprintf("%s: %s", s.e.Error, s.e.Reason))
}

func (b *Board) onBlocked(s statusEvent) {
	p, e, f := s.p, s.e, s.p.producer
	if f == nil {
		return
	}
	first := f.blockedSince.IsZero()
	f.blockedSince = s.at.Add(-time.Duration(e.Millis) * time.Millisecond)
	f.buffered, f.blockedErr = e.Count, e.Error
	b.sayBlocked(s.at, p, first)
}

func (b *Board) onUnblocked(s statusEvent) {
	e := s.e
	if f := s.p.producer; f != nil {
		f.blockedSince, f.buffered, f.blockedErr, f.blockedSaid = time.Time{}, 0, "", nil
	}
	if e.Error != "" {
		b.say(s, LevelBad, fmt.Sprintf("no longer blocked after %.1f s: %s", float64(e.Millis)/1000, e.Error))
		return
	}
	b.say(s, LevelGood, fmt.Sprintf("unblocked after %.1f s: acknowledgements resume, the %s land", float64(e.Millis)/1000, Plural(e.Count, "buffered record")))
}

func (b *Board) onBackpressure(s statusEvent) {
	p, e, f := s.p, s.e, s.p.usage
	if !p.alive() || f == nil {
		return
	}
	if f.backpressureSince.IsZero() {
		f.backpressureSince = s.at.Add(-time.Duration(e.Millis) * time.Millisecond)
	}
	f.backpressureReason = e.Reason
	b.say(s, LevelWarn, "backpressure: not taking new messages ("+e.Reason+")")
}

func (b *Board) onBackpressureEnded(s statusEvent) {
	if f := s.p.usage; f != nil {
		f.backpressureSince, f.backpressureReason = time.Time{}, ""
	}
	b.say(s, LevelGood, fmt.Sprintf("backpressure ended after %.1f s: taking messages again", float64(s.e.Millis)/1000))
}

func (b *Board) onStopping(s statusEvent) {
	p := s.p
	if p.alive() && p.state != Restarting {
		p.state = Stopping
	}
	msg := "stopping"
	if s.e.Reason != "" {
		msg += " (" + s.e.Reason + ")"
	}
	b.say(s, LevelInfo, msg)
}
