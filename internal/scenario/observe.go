package scenario

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// Observation is everything a condition or a check may read, captured from
// the board at one moment (so checks are pure functions of values).
type Observation struct {
	// At is the board's clock (the last Tick).
	At      time.Time
	Procs   map[string]board.ProcView
	Sensors board.SensorsView
	Usage   board.UsageView
	// HWM: the topic's latest high watermarks; Committed: consumer-usage's
	// group's latest committed offsets, CommitsCurrent when that group is
	// the one it runs with now.
	HWM       map[int32]int64
	Committed map[int32]int64
	// HWMAt: when HWM was asked for; HWMStale: the latest read failed, so
	// HWM is older than that.
	HWMAt          time.Time
	HWMStale       bool
	CommitGroup    string
	CommitsCurrent bool
	// CaughtUp and UsageCaughtUp as the board decides them.
	CaughtUp      bool
	UsageCaughtUp bool
	// How consumer-usage is (re)started from now on, and how
	// consumer-current rebuilds at its next start.
	UsageMode, UsageReset string
	Rebuild               string
	// Keys: per sensor, what the audit read of its key in the topic.
	Keys map[string]board.Truth
	// Parts: the topic's partitions as the latest metadata says.
	Parts board.PartitionsView
	// Acks: the producer's acks and what became of its acknowledged writes.
	Acks board.AcksView
	// Seed is the run's --seed (0: time-based): what a seeded schedule
	// is drawn from.
	Seed int64
	// OffsetsRetention: the lab's broker's (0: its default, unknown);
	// Expired: the latest expiry of consumer-usage's commits (nil: none).
	OffsetsRetention time.Duration
	Expired          *board.ExpiredCommits
}

// Capture reads an Observation from a board.
func Capture(b *board.Board) Observation {
	o := Observation{
		At:            b.Now(),
		Procs:         map[string]board.ProcView{},
		Sensors:       b.Sensors(),
		Usage:         b.Usage(),
		CaughtUp:      b.CaughtUp(),
		UsageCaughtUp: b.UsageCaughtUp(),
	}
	for _, p := range b.Processes() {
		o.Procs[p.Name] = p
	}
	o.HWM, o.HWMStale = b.HighWatermarks()
	o.HWMAt = b.HighWatermarksAt()
	o.Committed, o.CommitGroup, o.CommitsCurrent = b.Committed()
	o.UsageMode, o.UsageReset = b.UsageConfig()
	o.Rebuild = b.Rebuild()
	o.Keys = b.AuditKeys()
	o.Parts = b.Partitions()
	o.Acks = b.Acks()
	o.Seed = b.Config().Seed
	o.OffsetsRetention = b.Config().OffsetsRetention
	if e, ok := b.ExpiredCommits(); ok {
		o.Expired = &e
	}
	return o
}

// Proc returns one process row (zero value when not supervised).
func (o Observation) Proc(name string) board.ProcView { return o.Procs[name] }

// usageInstances counts the consumer-usage instances on the board.
func (o Observation) usageInstances() int {
	n := 0
	for name := range o.Procs {
		if board.IsUsage(name) {
			n++
		}
	}
	return n
}

// HWMSum is the number of messages in the topic (offsets start at 0 and a
// topic without transactions has no gaps).
func (o Observation) HWMSum() int64 { return sum(o.HWM) }

// CommittedSum sums consumer-usage's committed offsets (partitions without
// a commit count 0).
func (o Observation) CommittedSum() int64 {
	var s int64
	for _, c := range o.Committed {
		s += max(0, c)
	}
	return s
}

func sum(m map[int32]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// drift returns a sensor's drift in cents and whether it is known.
func (o Observation) drift(id string) (board.Drift, bool) {
	for _, r := range o.Usage.Rows {
		if r.SensorID == id && r.Drift != nil {
			return *r.Drift, true
		}
	}
	return board.Drift{}, false
}

// totalDrift is the usage panel's total drift (known when any sensor has one).
func (o Observation) totalDrift() (board.Drift, bool) {
	if o.Usage.Total.Drift == nil {
		return board.Drift{}, false
	}
	return *o.Usage.Total.Drift, true
}
