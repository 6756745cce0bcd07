package board

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// producerFacts is what the producer reports about its publishing.
type producerFacts struct {
	produced int64
	paused   bool
	// pauseAsked: a pause or resume sent and not yet confirmed by the
	// producer (OpPause, OpResume or "").
	pauseAsked string
	quietSince time.Time // when it last stopped publishing (paused or exited)
	// blockedSince: the producer's records stopped being acknowledged
	// (its Blocked event; zero when they are); buffered how many it holds,
	// blockedErr the produce error it reported, if any.
	blockedSince time.Time
	buffered     int64
	blockedErr   string
	// blockedSaid: the causes (by error name) the events gave for this
	// block so far: each is said once.
	blockedSaid map[string]bool
}

// currentFacts is what consumer-current reports about its rebuild.
type currentFacts struct {
	caughtUp     bool
	caughtUpMsgs int64
	caughtUpMs   int64
	// replayFrom: when its state first showed replaying (a Progress with
	// positions before CaughtUp); replayShown: from then to CaughtUp.
	replayFrom  time.Time
	replayShown time.Duration
	// What it keeps up for its next start (Prepares), and its
	// incarnation's rebuild: b.rebuilds[rebuildAt-1] (0: none yet).
	prepares  string
	prepared  string
	rebuildAt int
}

// usageFacts is what a consumer-usage instance reports about its group and
// its writes (scale.go).
type usageFacts struct {
	// redelivered: its count of messages delivered again at its first
	// assignment since it started; -1 until known.
	redelivered int64
	// backpressureSince: it stopped taking messages (store down or slow)
	// at this time; zero when it is not in backpressure.
	backpressureSince  time.Time
	backpressureReason string
	// The partitions owned now (nil: not known yet; empty: none, as after
	// a revoke), the group member id and generation of the latest
	// rebalance, second effects prevented and late writes since the
	// incarnation started, the effect delay it reported (delayKnown) and
	// the one the dashboard asked for (delayCfg).
	partitions      []int32
	member          string
	generation      int32
	prevented, late int64
	delay           time.Duration
	delayKnown      bool
	delayCfg        time.Duration
	// The rebalance lesson's facts: writes held now (latest per partition
	// since the delay last changed), the latest late write, the latest
	// assignment and revoke.
	held       []Write
	lates      []Write
	lastAssign *Rebalance
	lastRevoke *Rebalance
}

// newProc is a process of the board in state, with the facts of its role.
func newProc(name string, state State) *proc {
	p := &proc{name: name, state: state}
	switch {
	case role.Lookup(name).Lag == role.LagSent:
		p.producer = &producerFacts{}
	case name == Current:
		p.current = &currentFacts{}
	case IsUsage(name):
		p.usage = &usageFacts{redelivered: -1}
	}
	return p
}

// startFacts forgets what the role reported of its previous incarnation;
// what outlives it (when the producer went quiet, the effect delay asked
// for) stays.
func (p *proc) startFacts() {
	if f := p.producer; f != nil {
		*f = producerFacts{quietSince: f.quietSince}
	}
	if f := p.current; f != nil {
		*f = currentFacts{}
	}
	if f := p.usage; f != nil {
		*f = usageFacts{redelivered: -1, delayCfg: f.delayCfg}
	}
}

// exitFacts forgets what holds only while the process lives: a block, a
// backpressure, a catch-up, the partitions it owned (a dead member owns
// nothing; its partitions wait for the group).
func (p *proc) exitFacts() {
	if f := p.producer; f != nil {
		f.blockedSince, f.buffered, f.blockedErr, f.blockedSaid = time.Time{}, 0, "", nil
	}
	if f := p.current; f != nil {
		f.caughtUp = false
	}
	if f := p.usage; f != nil {
		f.backpressureSince, f.backpressureReason = time.Time{}, ""
		f.partitions, f.member, f.generation = nil, "", 0
	}
}
