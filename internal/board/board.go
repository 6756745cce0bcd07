// Package board is the dashboard's state: a pure data structure fed with
// input values (process lifecycle, status events, polls of offsets and HTTP
// endpoints, the audit's truth, clock ticks) and read through derived views
// (process rows, lag, sensors, usage with drift, the timeline, the JSON
// report). It does no I/O, starts no goroutines and never reads a clock, so
// the TUI and the headless mode share it and tests drive it directly.
//
// A Board is not safe for concurrent use: one goroutine (bubbletea's Update
// loop, or the headless event loop) owns it.
package board

import (
	"sort"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// Process names, as in package role.
const (
	Producer   = role.Producer
	Current    = role.Current
	Usage      = role.Usage
	Query      = role.Query
	Broker     = role.Broker
	Store      = role.Store
	Controller = role.Controller
)

// Canonical is the display order; its index+1 is the dashboard's jump key.
var Canonical = role.Display()

// Tunables with the reasons behind them.
const (
	// HistoryLen is how many lag samples a sparkline keeps.
	HistoryLen = 60
	// SampleEvery is the lag sampling interval (on Tick): HistoryLen of them
	// make the last minute.
	SampleEvery = time.Second
	// TimelineLen bounds the events timeline.
	TimelineLen = 200
	// StaleAfter: a successful poll older than this no longer counts as live
	// (pollers run about every second, so this is several missed polls).
	StaleAfter = 5 * time.Second
	// logKeep is how many stderr lines per process the board keeps.
	logKeep = 100
)

// Config is what the dashboard knows before anything runs.
type Config struct {
	Brokers string // bootstrap servers in use ("" until the embedded broker listens)
	Mongo   string // MongoDB URI in use
	RunDir  string // where logs and data of this run live
	Topic   string
	// UsageMode and UsageReset: how consumer-usage is started ("naive"/"guarded",
	// "latest"/"earliest"). Empty means the seed's defaults, naive + latest.
	UsageMode  string
	UsageReset string
	// Rebuild: how consumer-current rebuilds at a start (replay, snapshot,
	// changelog; empty: replay).
	Rebuild string
	// UsageCmd: the user's command that runs as consumer-usage ("" the
	// built-in). It says nothing of itself: it is up from its start.
	UsageCmd string
	// Seed is the producer's --seed (0: time-based).
	Seed int64
	// Resumed: the run continues an earlier one in its directory
	// (--resume).
	Resumed bool
	// OffsetsRetention: how long the lab's broker keeps an empty group's
	// commits (--offsets-retention; 0: the broker's own, unknown here).
	OffsetsRetention time.Duration
}

// UsageCmd is the user's command that runs as consumer-usage ("": the
// built-in one).
func (b *Board) UsageCmd() string { return b.cfg.UsageCmd }

// Board is the whole dashboard state.
type Board struct {
	cfg   Config
	now   time.Time
	order []string
	procs map[string]*proc

	mode, reset string // how consumer-usage is (re)started from now on
	// rebuild: how consumer-current rebuilds from its next start;
	// rebuilds: its starts, as rebuild.go keeps them.
	rebuild  string
	rebuilds []RebuildRun
	// keyless: read where no key works (headless output, a report): its
	// events point at files, not at keys.
	keyless bool
	// groupsSeen: the consumer groups processes started in so far.
	groupsSeen map[string]bool

	// clusterAddrs: each cluster broker's address (--cluster N); Brokers
	// is all of them.
	clusterAddrs map[string]string

	hwm    map[int32]int64
	hwmAt  time.Time
	hwmErr error
	// hwmErrLeaderMoved: hwmErr is a new leader's catching up, said by the
	// leader change itself (leaderCatchingUp).
	hwmErrLeaderMoved bool
	// hwmErrSince: when the watermark reads started failing.
	hwmErrSince time.Time
	// brokerAwayNoted: the one "broker unreachable" event of an outage was
	// given; the pollers' own failures are not repeated until it ends.
	brokerAwayNoted bool
	hwmHistory      []hwmSample
	committed       map[int32]int64
	commitGroup     string
	commitRead      reading

	lagHist map[string][]int64
	// statusHist: the samples each consumer's LagStatus is judged over.
	statusHist map[string][]lagSample
	// fleet: the producer's sensors, one message each per interval.
	fleet     int
	sampledAt time.Time

	sensors     []SensorState
	sensorsCU   bool
	sensorsRead reading

	usage     map[string]UsageTotals
	usageRead reading
	// malformed: the latest usage read's records that break the schema,
	// by reason (a consumer of the user's).
	malformed map[string]int
	// causeGroups: the groups of drift causes the timeline has named, and
	// when each was first seen.
	causeGroups map[string]time.Time
	// takes: each consumer-usage instance's assignments in this run, oldest
	// first, so the why view can say when a writer took a partition.
	takes     map[string][]take
	causesErr error
	// expectErr: the latest cut could not say what the audit expects.
	expectErr error

	truth        map[string]Truth
	truthRead    reading
	auditCount   int64
	auditThrough map[int32]int64

	parts  partsState
	acks   acksState
	moves  keyMoves
	expiry expiry
	ret    retentionState

	events  []Event
	nextSeq uint64
	// rebalanceFrom: the first revoke of the group's latest rebalance
	// (generation rebalanceGen), for how long partitions were between owners;
	// rebalanceTo: the generation that rebalance ended in (0 while open).
	// A later generation with no revoke before it (members crashed, or
	// joined after a crash) is another rebalance that the revoke says
	// nothing about.
	rebalanceFrom time.Time
	rebalanceGen  int32
	rebalanceTo   int32
}

// reading is what one poller's answers left: the latest successful one
// (at; seen once one came) and the latest failure (err at errAt; nil once
// a reading succeeds again).
type reading struct {
	at    time.Time
	seen  bool
	err   error
	errAt time.Time
}

type hwmSample struct {
	at  time.Time
	hwm map[int32]int64
}

// New returns a board for the given processes (any order; shown in the
// Canonical order, unknown names after it).
func New(processes []string, cfg Config) *Board {
	b := &Board{
		cfg:        cfg,
		procs:      map[string]*proc{},
		groupsSeen: map[string]bool{},
		lagHist:    map[string][]int64{},
		statusHist: map[string][]lagSample{},
		usage:      map[string]UsageTotals{},
		truth:      map[string]Truth{},
		mode:       orDefault(cfg.UsageMode, "naive"),
		reset:      orDefault(cfg.UsageReset, "latest"),
		rebuild:    orDefault(cfg.Rebuild, "replay"),
	}
	rank := func(n string) int {
		if IsKafkaNode(n) { // a cluster's nodes where the broker is
			n = Broker
		}
		for i, c := range Canonical {
			if c == n {
				return i
			}
		}
		return len(Canonical)
	}
	seen := map[string]bool{}
	for _, n := range processes {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		b.order = append(b.order, n)
		b.procs[n] = newProc(n, Starting)
	}
	sort.SliceStable(b.order, func(i, j int) bool { return rank(b.order[i]) < rank(b.order[j]) })
	return b
}

// SetKeyless makes the board's events point at files rather than at keys:
// for a board read where no key works (headless output, a report).
func (b *Board) SetKeyless() { b.keyless = true }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Apply feeds one input to the board. It reports whether the board took
// it: a Narration is the front end's, not the board's.
func (b *Board) Apply(in Input) bool {
	if _, ok := in.(frontEnds); ok {
		return false
	}
	in = shownInput(in)
	return b.applyProcess(in) || b.applyPoll(in) || b.applyControl(in)
}

// applyProcess takes what the supervised processes do and say.
func (b *Board) applyProcess(in Input) bool {
	switch v := in.(type) {
	case ProcStarted:
		b.procStarted(v)
	case ProcExited:
		b.procExited(v)
	case ProcStatus:
		b.procStatus(v)
	case ProcLog:
		if p := b.procs[v.Name]; p != nil {
			p.addLog(v.Line)
		}
	case ProcFrozen:
		b.procFrozen(v)
	case ProcAdded:
		b.procAdded(v)
	case ProcRemoved:
		b.procRemoved(v)
	case LaunchFailed:
		b.launchFailed(v)
	default:
		return false
	}
	return true
}

// applyPoll takes the clock and the pollers' readings.
func (b *Board) applyPoll(in Input) bool {
	switch v := in.(type) {
	case Tick:
		if v.Now.After(b.now) {
			b.now = v.Now
		}
		b.sampleLag()
	case Offsets:
		b.offsets(v)
	case Committed:
		b.committedOffsets(v)
	case Partitions:
		b.partitions(v)
	case SensorsSnapshot:
		b.sensorsSnapshot(v)
	case UsageSnapshot:
		b.usageSnapshot(v)
	case TruthSnapshot:
		b.truthSnapshot(v)
	case HealthProbe:
		b.healthProbe(v)
	case AckedCheck:
		b.ackedCheck(v)
	default:
		return false
	}
	return true
}

// applyControl takes what a person or a script asked for.
func (b *Board) applyControl(in Input) bool {
	switch v := in.(type) {
	case Action:
		b.event(v.At, "", LevelAction, v.Text)
	case Mode:
		b.setMode(v)
	case Settings:
		b.settings(v)
	case Rebuild:
		b.setRebuild(v)
	case Request:
		b.request(v)
	case RequestDone:
		b.requestDone(v)
	case EffectDelaySet:
		b.effectDelaySet(v)
	case AcksSetting:
		b.acksSetting(v)
	case PartitionsAdded:
		b.partitionsAdded(v)
	case TopicRecreated:
		b.topicRecreated(v)
	case RetentionSet:
		b.retentionSet(v)
	default:
		return false
	}
	return true
}

// Now is the latest time the board has seen in a Tick.
func (b *Board) Now() time.Time { return b.now }

// Config returns the configuration, with the broker and store addresses
// filled in from the embedded roles' Listening events once they are known.
func (b *Board) Config() Config { return b.cfg }

// Names lists the processes in display order.
func (b *Board) Names() []string { return append([]string(nil), b.order...) }

// Has reports whether the board supervises the named process.
func (b *Board) Has(name string) bool { return b.procs[name] != nil }

// UsageConfig is how consumer-usage is (re)started from now on.
func (b *Board) UsageConfig() (mode, reset string) { return b.mode, b.reset }

func (b *Board) setMode(m Mode) {
	changed := false
	if m.UsageMode != "" && m.UsageMode != b.mode {
		b.mode, changed = m.UsageMode, true
	}
	if m.UsageReset != "" && m.UsageReset != b.reset {
		b.reset, changed = m.UsageReset, true
	}
	if changed {
		at := m.At
		if at.IsZero() {
			at = b.now
		}
		b.event(at, Usage, LevelAction, "from its next start: mode "+b.mode+", reset "+b.reset)
	}
}
