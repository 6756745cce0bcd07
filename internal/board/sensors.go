package board

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Freshness says whether numbers a panel would show are live.
type Freshness int

const (
	// Live: the latest poll succeeded recently against the running process.
	Live Freshness = iota
	// Rebuilding: consumer-current is replaying; rows are its partial state.
	Rebuilding
	// Waiting: the process runs but has not answered yet since it started.
	Waiting
	// Down: the process is not running; any rows are last known values.
	Down
	// Failing: the latest poll failed; any rows are last known values.
	Failing
	// Stale: the last good poll is older than StaleAfter.
	Stale
	// Disconnected: the process runs but cannot reach the broker; the rows
	// are what it had when the broker went away.
	Disconnected
)

func (f Freshness) String() string {
	switch f {
	case Live:
		return "live"
	case Rebuilding:
		return "rebuilding"
	case Waiting:
		return "waiting"
	case Down:
		return "down"
	case Failing:
		return "failing"
	case Stale:
		return "stale"
	case Disconnected:
		return "disconnected"
	}
	return "?"
}

func (b *Board) sensorsSnapshot(v SensorsSnapshot) {
	if v.Err != nil {
		if b.sensorsRead.err == nil || b.sensorsRead.errAt.Before(b.sensorsRead.at) {
			if p := b.procs[Current]; p != nil && p.alive() && p.pending == "" {
				b.event(v.At, Current, LevelWarn, "GET /state failed: "+v.Err.Error())
			}
		}
		b.sensorsRead.err, b.sensorsRead.errAt = v.Err, v.At
		return
	}
	b.sensorsRead.err = nil
	b.sensors = append([]SensorState(nil), v.Sensors...)
	sort.Slice(b.sensors, func(i, j int) bool { return b.sensors[i].SensorID < b.sensors[j].SensorID })
	b.sensorsRead.at = v.At
	b.sensorsRead.seen = true
	b.sensorsCU = v.CaughtUp
	if v.CaughtUp {
		b.noteForgotten(v.At)
	}
}

// TruthCheck compares consumer-current's state of a sensor with the audit.
type TruthCheck string

const (
	TruthUnknown TruthCheck = ""        // no audit state for the sensor
	TruthMatch   TruthCheck = "match"   // same message: same timestamp and counters
	TruthBehind  TruthCheck = "behind"  // an older message than the audit's latest
	TruthAhead   TruthCheck = "ahead"   // a later message than the audit has read yet: nothing to compare
	TruthDiffers TruthCheck = "differs" // the same message with other values: the state is wrong
)

// SensorRow is one sensor as consumer-current holds it.
type SensorRow struct {
	SensorState
	Age      time.Duration // board clock minus the message timestamp
	AgeKnown bool
	Stale    bool // not live: last known values of a process that is down, failing or restarted
	Truth    TruthCheck
}

// SensorsView is the sensors panel: consumer-current's state and whether it
// can be trusted right now.
type SensorsView struct {
	Status Freshness
	Reason string    // why, in words, when not live ("consumer-current is crashed (SIGKILL)")
	AsOf   time.Time // when the rows were read (zero if never)
	// StaleRows: the rows are last known values, not live state.
	StaleRows bool
	// Replay progress while rebuilding.
	Done, Total int64
	Progress    float64
	Rows        []SensorRow
	// Rebuild is how the running consumer-current rebuilt (or is
	// rebuilding) its state, in words (RebuildRun.Text), RebuildShort the
	// same in fewer cells; "" while it is not live or rebuilding, or
	// before it said.
	Rebuild, RebuildShort string
	// Forgotten: sensors the audit read and the running consumer-current
	// does not hold, whose last message retention deleted: a replay from
	// earliest cannot rebuild them (retention.go).
	Forgotten []Forgotten
}

// brokerDown: the supervised broker ran and is not up now; in a cluster,
// every broker ran and none is up (one broker down of three is a failover,
// not an outage).
func (b *Board) brokerDown() bool {
	if br := b.procs[Broker]; br != nil {
		return br.down()
	}
	brokers := b.clusterBrokers()
	for _, br := range brokers {
		if !br.down() {
			return false
		}
	}
	return len(brokers) > 0
}

// Sensors returns the sensors panel state.
func (b *Board) Sensors() SensorsView {
	v := SensorsView{AsOf: b.sensorsRead.at}
	v.Done, v.Total, v.Progress = b.ReplayProgress()
	p := b.procs[Current]
	thisRun := p != nil && b.sensorsRead.seen && p.alive() && !b.sensorsRead.at.Before(p.startedAt)
	v.Status, v.Reason = b.currentFreshness(p, thisRun)
	stale := !(v.Status == Live || (v.Status == Rebuilding && thisRun))
	v.StaleRows = stale && len(b.sensors) > 0
	if p != nil && p.alive() && (v.Status == Live || v.Status == Rebuilding) {
		if r := b.currentRebuild(p); r != nil {
			v.Rebuild, v.RebuildShort = r.Text(b.loc()), r.Short(b.loc())
		}
	}
	for _, s := range b.sensors {
		r := SensorRow{SensorState: s, Stale: stale}
		if s.Timestamp > 0 && !b.now.IsZero() {
			r.Age = max(0, b.now.Sub(time.UnixMilli(s.Timestamp)))
			r.AgeKnown = true
		}
		if t, ok := b.truth[s.SensorID]; ok && t.Last != nil {
			r.Truth = compareTruth(s, *t.Last)
		}
		v.Rows = append(v.Rows, r)
	}
	if v.Status == Live && thisRun {
		v.Forgotten = b.forgotten()
	}
	return v
}

// currentFreshness is how fresh consumer-current's state is, and why;
// thisRun: the latest state is of its running incarnation.
func (b *Board) currentFreshness(p *proc, thisRun bool) (Freshness, string) {
	switch {
	case p == nil:
		return Down, "consumer-current is not supervised"
	case !p.alive() || p.state == Crashing || p.state == Stopping || p.state == Restarting:
		label, _ := b.stateLabel(p)
		return Down, "consumer-current is " + label
	case b.brokerDown() || (p.state == Retrying && p.detail == "kafka"):
		return Disconnected, b.disconnectedReason()
	case b.sensorsRead.err != nil && !b.sensorsRead.errAt.Before(b.sensorsRead.at):
		return Failing, "GET /state failed: " + b.sensorsRead.err.Error()
	case !thisRun && p.state == Replaying:
		return Rebuilding, "rebuilding from earliest"
	case !thisRun:
		return Waiting, "waiting for consumer-current's state"
	case !b.now.IsZero() && b.now.Sub(b.sensorsRead.at) > StaleAfter:
		return Stale, fmt.Sprintf("no answer from consumer-current for %s", roundSecs(b.now.Sub(b.sensorsRead.at)))
	case !p.current.caughtUp && !b.sensorsCU:
		return Rebuilding, "rebuilding from earliest"
	}
	return Live, "live"
}

// disconnectedReason says why consumer-current cannot reach the broker.
func (b *Board) disconnectedReason() string {
	br := b.procs[Broker]
	switch {
	case br != nil && !br.alive():
		label, _ := b.stateLabel(br)
		return "the broker is " + label
	case br == nil && b.brokerDown():
		return "every broker of the cluster is down"
	}
	return "consumer-current cannot reach the broker"
}

// compareTruth compares consumer-current's state with the audit's latest
// message of the sensor. The two are read at different moments, so only
// the same message can be compared value by value: one read a moment
// earlier or later is behind or ahead, never wrong. Messages are placed by
// partition and offset (a key keeps its sensor in one partition), or by
// timestamp across partitions.
func compareTruth(cur, truth SensorState) TruthCheck {
	same := cur.Timestamp == truth.Timestamp && cents(cur.HoursTot) == cents(truth.HoursTot) && cents(cur.KmTot) == cents(truth.KmTot)
	before, after := cur.Timestamp < truth.Timestamp, cur.Timestamp > truth.Timestamp
	if cur.Partition == truth.Partition {
		before, after = cur.Offset < truth.Offset, cur.Offset > truth.Offset
	}
	switch {
	case before:
		return TruthBehind
	case after:
		return TruthAhead
	case same:
		return TruthMatch
	}
	return TruthDiffers
}

// cents is the unit drift is decided in: usage is recorded rounded to 2 decimals.
func cents(f float64) int64 { return int64(math.Round(f * 100)) }

func roundSecs(d time.Duration) string { return d.Round(time.Second).String() }
