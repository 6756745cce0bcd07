package board

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// State is a process's lifecycle state as the board shows it.
type State string

const (
	Starting   State = "starting"   // spawned (or about to be), not yet doing its job
	Replaying  State = "replaying"  // consumer-current rebuilding its state from earliest
	Running    State = "running"    // doing its job
	Retrying   State = "retrying"   // alive but a dependency is unreachable
	Stopping   State = "stopping"   // graceful stop requested or begun
	Stopped    State = "stopped"    // ended deliberately
	Crashing   State = "crashing"   // a crash was requested, the exit is not seen yet
	Crashed    State = "crashed"    // ended without being asked to (signal or exit code)
	Restarting State = "restarting" // a restart was requested and is in progress
	// Failed: alive but reported an error it does not recover from (its
	// exit follows), or never started because the launch failed
	// (LaunchFailed: r retries).
	Failed State = "failed"
)

// Level tells a view how good or bad something is; views pick colours from
// it and always print a word too.
type Level int

const (
	LevelInfo Level = iota
	LevelGood
	LevelWarn
	LevelBad
	LevelAction // something a person or script did
	LevelMuted  // secondary detail (stderr lines)
)

// Exit describes how a process ended.
type Exit struct {
	At         time.Time
	PID        int
	Code       int
	Signal     string
	Deliberate bool
}

// Label is "SIGKILL" or "exit 1".
func (e Exit) Label() string {
	if e.Signal != "" {
		return e.Signal
	}
	return fmt.Sprintf("exit %d", e.Code)
}

type proc struct {
	name      string
	state     State
	prevState State // state before a pending request, restored if it fails
	pending   string
	pendingAt time.Time // when pending was asked for
	// pauseAsked: a pause or resume sent and not yet confirmed by the
	// producer (OpPause, OpResume or "").
	pauseAsked string
	pid        int
	startedAt  time.Time
	starts     int
	crashes    int
	lastExit   *Exit
	detail     string

	// From the Started event.
	mode, reset, groupID string
	httpAddr             string

	// From Progress/CaughtUp events of the current incarnation.
	positions    []status.Position
	positionsAt  time.Time // when positions (and their watermarks) were reported
	processed    int64
	invalid      int64
	lastInvalid  string // reason of the latest invalid message it skipped
	produced     int64
	paused       bool
	quietSince   time.Time // producer: when it last stopped publishing (paused or exited)
	caughtUp     bool
	caughtUpMsgs int64
	caughtUpMs   int64
	// replayFrom: when its state first showed replaying (a Progress with
	// positions before CaughtUp); replayShown: from then to CaughtUp.
	replayFrom  time.Time
	replayShown time.Duration
	// consumer-current: what it keeps up for its next start (Prepares),
	// and its incarnation's rebuild: b.rebuilds[rebuildAt-1] (0: none yet).
	prepares  string
	prepared  string
	rebuildAt int

	armed     string
	lastCrash *CrashPointHit
	// lastError: the latest Error event of this incarnation (the reason a
	// failed or crashed process gives), kept until the next start.
	lastError string
	// revoked: the consumer's partitions were revoked and it has not been
	// assigned any since (it holds none now).
	revoked bool
	// redelivered: consumer-usage's count of messages delivered again at
	// its first assignment since it started; -1 until known.
	redelivered int64
	// newGroup: this incarnation started with reset earliest in a group no
	// process started in before: a group without committed offsets, so it
	// reads from the beginning of the topic.
	newGroup bool

	// frozen: the current incarnation is SIGSTOPped (health.go); frozenAt
	// and thawedAt: its latest freeze and thaw.
	frozen             bool
	frozenAt, thawedAt time.Time
	health             healthState
	// backpressureSince: consumer-usage stopped taking messages (store
	// down or slow) at this time; zero when it is not in backpressure.
	backpressureSince  time.Time
	backpressureReason string
	// blockedSince: the producer's records stopped being acknowledged
	// (its Blocked event; zero when they are); buffered how many it holds,
	// blockedErr the produce error it reported, if any.
	blockedSince time.Time
	buffered     int64
	blockedErr   string
	// blockedSaid: the causes (by error name) the events gave for this
	// block so far: each is said once.
	blockedSaid map[string]bool

	logs     []string
	logSince int // index in logs where the current incarnation's lines start

	// consumer-usage instances (scale.go): the partitions owned now (nil:
	// not known yet; empty: none, as after a revoke), the group member id
	// and generation of the latest rebalance, second effects prevented and
	// late writes since the incarnation started, the effect delay it
	// reported (delayKnown) and the one the dashboard asked for (delayCfg).
	partitions      []int32
	member          string
	generation      int32
	prevented, late int64
	delay           time.Duration
	delayKnown      bool
	delayCfg        time.Duration
	// The rebalance lesson's facts (scale.go): writes held now (latest per
	// partition since the delay last changed), the latest late write, the
	// latest assignment and revoke.
	held       []Write
	lates      []Write
	lastAssign *Rebalance
	lastRevoke *Rebalance
}

func (p *proc) alive() bool { return p.pid != 0 }

func (p *proc) addLog(line string) {
	p.logs = append(p.logs, line)
	if over := len(p.logs) - logKeep; over > 0 {
		p.logs = append([]string(nil), p.logs[over:]...)
		p.logSince = max(0, p.logSince-over)
	}
}

// upState is the state of a live process that is doing its job as far as
// the board knows.
func (p *proc) upState() State {
	if p.name == Current && !p.caughtUp {
		if len(p.positions) > 0 {
			return Replaying
		}
		return Starting
	}
	return Running
}

func (b *Board) procStarted(v ProcStarted) {
	p := b.procs[v.Name]
	if p == nil {
		return
	}
	p.pid = v.PID
	p.startedAt = v.At
	p.starts++
	p.state = Starting
	p.pending = ""
	p.detail = ""
	p.mode, p.reset, p.groupID, p.httpAddr = "", "", "", ""
	p.newGroup = false
	p.positions = nil
	p.processed, p.invalid, p.produced = 0, 0, 0
	p.lastError, p.redelivered = "", -1
	p.revoked = false
	p.lastInvalid = ""
	p.paused, p.pauseAsked = false, ""
	p.caughtUp, p.caughtUpMsgs, p.caughtUpMs = false, 0, 0
	p.replayFrom, p.replayShown = time.Time{}, 0
	p.prepares, p.prepared, p.rebuildAt = "", "", 0
	p.frozen, p.health = false, healthState{}
	p.frozenAt, p.thawedAt = time.Time{}, time.Time{}
	p.backpressureSince, p.backpressureReason = time.Time{}, ""
	p.blockedSince, p.buffered, p.blockedErr, p.blockedSaid = time.Time{}, 0, "", nil
	p.partitions, p.member, p.generation = nil, "", 0
	p.prevented, p.late, p.delay, p.delayKnown = 0, 0, 0, false
	p.held, p.lates, p.lastAssign, p.lastRevoke = nil, nil, nil, nil
	p.logSince = len(p.logs)
	verb := "started"
	if p.starts > 1 {
		verb = fmt.Sprintf("restarted (start #%d)", p.starts)
	}
	b.event(v.At, v.Name, LevelGood, fmt.Sprintf("%s, pid %d", verb, v.PID))
}

func (b *Board) procExited(v ProcExited) {
	p := b.procs[v.Name]
	if p == nil {
		return
	}
	if v.PID == p.pid {
		p.quietSince = v.At
	}
	if v.PID != 0 && p.pid != 0 && v.PID != p.pid {
		// A late exit of an earlier incarnation: history only.
		b.event(v.At, v.Name, LevelMuted, fmt.Sprintf("earlier pid %d ended (%s)", v.PID, Exit{Code: v.ExitCode, Signal: v.Signal}.Label()))
		return
	}
	ex := Exit{At: v.At, PID: v.PID, Code: v.ExitCode, Signal: v.Signal, Deliberate: v.Deliberate}
	p.lastExit = &ex
	p.pid = 0
	p.armed = ""
	p.frozen, p.health = false, healthState{}
	p.caughtUp = false
	p.backpressureSince, p.backpressureReason = time.Time{}, ""
	p.blockedSince, p.buffered, p.blockedErr, p.blockedSaid = time.Time{}, 0, "", nil
	// A dead member owns nothing; its partitions wait for the group.
	p.partitions, p.member, p.generation = nil, "", 0
	restarting := p.pending == OpRestart
	// A SIGKILL the user asked for with x is a crash even if the supervisor
	// counts it as its own doing.
	switch {
	case v.Deliberate && p.pending != OpCrash:
		p.state = Stopped
		took := ""
		if (p.pending == OpStop || p.pending == OpRestart) && !p.pendingAt.IsZero() {
			// How long the graceful stop took, the figure its bound is about.
			took = fmt.Sprintf(", %.1f s after SIGTERM", v.At.Sub(p.pendingAt).Seconds())
		}
		b.event(v.At, v.Name, LevelInfo, fmt.Sprintf("stopped (%s%s)", ex.Label(), took))
	default:
		p.crashes++
		p.state = Crashed
		// Its last log lines are in the log view (l), not copied here.
		text := fmt.Sprintf("crashed: %s (pid %d)", crashCause(ex), v.PID)
		if p.lastError != "" {
			text = fmt.Sprintf("crashed: %s (pid %d): %s", crashCause(ex), v.PID, p.lastError)
		}
		if len(p.recentLogs(1)) > 0 {
			text += "; " + b.logsPointer(v.Name)
		}
		switch {
		case p.pending == OpCrash && !restarting:
			text = fmt.Sprintf("crashed on request: %s (pid %d); it stays down until r restarts it", crashCause(ex), v.PID)
		case p.pending == OpCrash:
			text = fmt.Sprintf("crashed on request: %s (pid %d)", crashCause(ex), v.PID)
		}
		b.event(v.At, v.Name, LevelBad, text)
	}
	if restarting {
		p.state = Restarting
	} else {
		p.pending = ""
	}
	p.detail = ""
}

// logsPointer says where a process's last log lines are: the log view's
// key, or the run's log file where no key works.
func (b *Board) logsPointer(name string) string {
	if b.keyless {
		return "its last log lines are in " + filepath.Join(b.cfg.RunDir, "logs", name+".log")
	}
	return "l shows its last log lines"
}

// brokersDown is librdkafka's count of unreachable connections, which
// includes the bootstrap one ("2/2 brokers are down" with one broker, or
// "0/1" as a connection drops): it says the broker is unreachable.
var brokersDown = regexp.MustCompile(`^\d+/\d+ brokers are down$`)

// plainError words a client error for the timeline; the raw text stays
// in the process's log (l).
func plainError(endpoint, msg string) string {
	low := strings.ToLower(msg)
	switch {
	case brokersDown.MatchString(msg):
		return "broker unreachable"
	case endpoint == "mongo" && (strings.Contains(low, "connection refused") || strings.Contains(low, "server selection")):
		return "store unreachable (connection refused)"
	case endpoint == "mongo" && (strings.Contains(low, "unexpectedly closed") || strings.Contains(low, "connection reset") || strings.Contains(low, "eof")):
		return "store unreachable (connection lost)"
	case strings.Contains(low, "connection refused"):
		return "broker unreachable (connection refused)"
	}
	return msg
}

// redeliveryText says what a consumer-usage start resumes with, in terms a
// presenter can check against the committed offsets; newGroup: a group
// without commits, which starts at the beginning of the topic.
func redeliveryText(n int64, newGroup bool) string {
	switch {
	case newGroup:
		return fmt.Sprintf("starts at the beginning of the topic (a new group with reset earliest has no committed offsets): %s delivered again",
			Plural(n, "message"))
	case n == 0:
		return "resumes exactly where processing stopped: committed offsets = processed, 0 messages delivered again"
	}
	return fmt.Sprintf("resumes at the committed offsets, behind what was processed: %s delivered again", Plural(n, "message"))
}

func redeliveryLevel(n int64) Level {
	if n == 0 {
		return LevelGood
	}
	return LevelWarn
}

func crashCause(e Exit) string {
	if e.Signal != "" {
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exited with code %d", e.Code)
}

// recentLogs returns up to n stderr lines of the latest incarnation.
func (p *proc) recentLogs(n int) []string {
	l := p.logs[min(p.logSince, len(p.logs)):]
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return l
}

func (b *Board) launchFailed(v LaunchFailed) {
	var names []string
	for _, n := range b.order {
		p := b.procs[n]
		if p.alive() || (p.state != Starting && p.state != Failed && p.state != Restarting) {
			continue
		}
		p.state, p.detail, p.pending = Failed, v.Cause, ""
		names = append(names, n)
	}
	text := "could not start"
	if len(names) > 0 {
		text += " " + strings.Join(names, ", ")
	}
	if v.Err != nil {
		text += ": " + v.Err.Error()
	}
	b.event(v.At, "", LevelBad, text+" — r on any of them tries again")
}

// invalidEvent folds a run of invalid-message events of one process into
// one timeline entry so a burst of bad records does not flush the timeline.
func (b *Board) invalidEvent(at time.Time, name string, e status.Event) {
	detail := fmt.Sprintf("partition %d offset %d: %s", e.Partition, e.Offset, e.Error)
	if n := len(b.events); n > 0 {
		last := &b.events[n-1]
		if last.Proc == name && last.invalidRun > 0 {
			last.invalidRun++
			last.At = at
			last.Text = fmt.Sprintf("%d invalid messages skipped (last: %s)", last.invalidRun, detail)
			return
		}
	}
	b.event(at, name, LevelWarn, "invalid message skipped: "+detail)
	b.events[len(b.events)-1].invalidRun = 1
}

func partitionList(ps []int32) string {
	if len(ps) == 0 {
		return "[]"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func (b *Board) request(v Request) {
	p := b.procs[v.Name]
	if p == nil {
		return
	}
	if v.Op == OpPause || v.Op == OpResume {
		// A pause of a paused producer (or a resume of a publishing one) is
		// nothing it will confirm: no change is pending.
		if p.pauseAsked != "" || p.paused != (v.Op == OpPause) {
			p.pauseAsked = v.Op
		}
		b.event(v.At, v.Name, LevelAction, v.Op+" requested")
		return
	}
	if v.Op == OpFreeze || v.Op == OpThaw {
		b.event(v.At, v.Name, LevelAction, freezeText(v.Op))
		return
	}
	if v.Op == OpInjectBad {
		b.event(v.At, v.Name, LevelAction, "malformed records requested (every kind in turn)")
		return
	}
	if v.Op == OpHistory {
		b.event(v.At, v.Name, LevelAction, "a burst of history requested")
		return
	}
	if p.pending == "" {
		p.prevState = p.state
	}
	p.pending = v.Op
	p.pendingAt = v.At
	switch v.Op {
	case OpCrash:
		p.state = Crashing
		b.event(v.At, v.Name, LevelAction, "crash requested (SIGKILL to its process group)")
	case OpStop:
		p.state = Stopping
		b.event(v.At, v.Name, LevelAction, "stop requested (SIGTERM)")
	case OpRestart:
		p.state = Restarting
		b.event(v.At, v.Name, LevelAction, "restart requested")
	case OpStart:
		p.state = Starting
		b.event(v.At, v.Name, LevelAction, "start requested")
	}
}

func (b *Board) requestDone(v RequestDone) {
	p := b.procs[v.Name]
	if p == nil || v.Err == nil {
		return
	}
	if v.Op == OpPause || v.Op == OpResume || v.Op == OpInjectBad || v.Op == OpHistory {
		if v.Op == OpPause || v.Op == OpResume {
			p.pauseAsked = ""
		}
		b.event(v.At, v.Name, LevelBad, fmt.Sprintf("%s failed: %v", v.Op, v.Err))
		return
	}
	if v.Op == OpFreeze || v.Op == OpThaw {
		b.event(v.At, v.Name, LevelBad, fmt.Sprintf("%s failed: %v", v.Op, v.Err))
		return
	}
	b.event(v.At, v.Name, LevelBad, fmt.Sprintf("%s failed: %v", v.Op, v.Err))
	if p.pending == v.Op {
		p.pending = ""
		p.state = p.prevState
	}
}

// PausedOrPausing: the producer is paused, or a pause was asked for and
// not yet confirmed (a resume asked for counts as publishing).
func (v ProcView) PausedOrPausing() bool {
	switch v.PauseAsked {
	case OpPause:
		return true
	case OpResume:
		return false
	}
	return v.Paused
}

// ProcView is one process row, everything a view needs, already in words.
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

	// consumer-usage: the mode and reset it runs with (or will run with) and
	// an armed crash point.
	Mode, Reset, GroupID string
	Armed                string

	// producer
	Produced int64
	Paused   bool
	// Acks: the producer's acks setting (the running one's, else the one
	// it starts with).
	Acks string
	// PauseAsked is OpPause or OpResume while the producer has not yet
	// confirmed it.
	PauseAsked string

	Lag     Lag
	History []int64 // lag samples, oldest first; -1 = unknown
	// LagStatus: the lag judged over the last StatusWindow samples.
	LagStatus LagStatus

	// What the current incarnation reported about itself (Progress and
	// CaughtUp events); zero before its first report.
	StartedAt time.Time
	Positions []status.Position
	Processed int64
	Invalid   int64
	// LastInvalid is the reason of the latest invalid message this
	// incarnation skipped ("" before any).
	LastInvalid      string
	CaughtUp         bool
	CaughtUpMessages int64
	CaughtUpMillis   int64
	// consumer-current: Rebuild is how it rebuilds from its next start,
	// Prepares what its running incarnation keeps up for it ("" before it
	// says), LastRebuild how its latest incarnation rebuilt (nil before
	// one announced it); Prepared the strategy it saved once since it began
	// to prepare it.
	Rebuild     string
	Prepares    string
	Prepared    string
	LastRebuild *RebuildRun
	// ReplayShown: how long consumer-current's rebuild showed as replaying
	// (the row's "replaying N%", the sensors panel's progress bar), from
	// its first progress report with positions to CaughtUp, on the
	// process's own clock; 0 when it caught up without one.
	ReplayShown time.Duration
	// LastCrashPoint is the latest crash point the process reached (any
	// incarnation), nil if none.
	LastCrashPoint *CrashPointHit
	// LastError is the reason of the latest Error event since it started.
	LastError string
	// Redelivered: consumer-usage's messages delivered again at its last
	// start; -1 until it is known.
	Redelivered int64

	// Frozen: SIGSTOPped (State is Frozen unless a request is pending).
	// FrozenAt and ThawedAt: the incarnation's latest freeze and thaw
	// (zero: none).
	Frozen             bool
	FrozenAt, ThawedAt time.Time
	Health             HealthView
	// Backpressure is how long consumer-usage has not been taking new
	// messages because the store is down or slow (0: it takes them), and
	// BackpressureReason why.
	Backpressure       time.Duration
	BackpressureReason string
	// Blocked (producer): how long its records have not been acknowledged
	// (0: they are), Buffered how many it holds, BlockedCause why when
	// known: the metadata's "NOT_ENOUGH_REPLICAS (isr 1 <
	// min.insync.replicas 2)", else the error the producer reported.
	Blocked      time.Duration
	Buffered     int64
	BlockedCause string

	// consumer-usage instances: Instance is n of UsageInstance(n) (0 for
	// the other processes); Partitions the partitions it owns now (nil:
	// not known, empty: none); Member and Generation of its latest
	// rebalance; Prevented (second effects refused) and Late (records
	// written after their partition was revoked) since it started;
	// EffectDelay how long it holds each write (as it reported it, else as
	// asked for its next start).
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
		return ProcView{}
	}
	v := ProcView{
		Name:       name,
		Strategy:   b.strategy(p),
		State:      p.state,
		Detail:     p.detail,
		PID:        p.pid,
		Alive:      p.alive(),
		Starts:     p.starts,
		Crashes:    p.crashes,
		LastExit:   p.lastExit,
		Pending:    p.pending,
		GroupID:    p.groupID,
		Armed:      p.armed,
		Produced:   p.produced,
		Paused:     p.paused,
		PauseAsked: p.pauseAsked,
		Lag:        b.lagOf(name),
		History:    append([]int64(nil), b.lagHist[name]...),
		LagStatus:  b.lagStatus(name),

		Positions:        append([]status.Position(nil), p.positions...),
		Processed:        p.processed,
		Invalid:          p.invalid,
		LastInvalid:      p.lastInvalid,
		CaughtUp:         p.caughtUp,
		CaughtUpMessages: p.caughtUpMsgs,
		CaughtUpMillis:   p.caughtUpMs,
		ReplayShown:      p.replayShown,
		LastCrashPoint:   p.lastCrash,
		LastError:        p.lastError,
		Redelivered:      p.redelivered,
		Frozen:           p.frozen,
		Health:           b.healthOf(p),
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
	if name == Producer {
		v.Acks = b.producerAcks()
	}
	if n, ok := UsageInstanceNumber(name); ok {
		b.usageInstanceView(&v, p, n)
	}
	if name == Current {
		v.Rebuild, v.LastRebuild = b.rebuild, b.currentRebuild(p)
		if p.alive() {
			v.Prepares = p.prepares
			if p.prepared == p.prepares {
				v.Prepared = p.prepared
			}
		}
	}
	if p.alive() && !p.startedAt.IsZero() && b.now.After(p.startedAt) {
		v.Uptime = b.now.Sub(p.startedAt)
	}
	if p.alive() && !p.backpressureSince.IsZero() {
		v.Backpressure = max(b.now.Sub(p.backpressureSince), time.Millisecond)
		v.BackpressureReason = p.backpressureReason
	}
	if p.alive() && !p.blockedSince.IsZero() {
		v.Blocked = max(b.now.Sub(p.blockedSince), time.Millisecond)
		v.Buffered, v.BlockedCause = p.buffered, b.blockedCause(p)
	}
	v.StateLabel, v.Level = b.stateLabel(p)
	return v
}

// usageInstanceView adds what consumer-usage instance n reported and runs
// with (or will run with at its next start).
func (b *Board) usageInstanceView(v *ProcView, p *proc, n int) {
	v.Instance = n
	v.Partitions = partitionsOf(p)
	v.Member, v.Generation = p.member, p.generation
	v.Prevented, v.Late = p.prevented, p.late
	v.Held, v.LateWrites, v.LastAssign, v.LastRevoke = slices.Clone(p.held), slices.Clone(p.lates), p.lastAssign, p.lastRevoke
	v.EffectDelay = p.delayCfg
	if p.alive() && p.delayKnown {
		v.EffectDelay = p.delay
	}
	v.Mode, v.Reset = b.mode, b.reset
	if p.alive() && p.mode != "" {
		v.Mode = p.mode
	}
	if p.alive() && p.reset != "" {
		v.Reset = p.reset
	}
}

// sayBlocked puts the producer's block on the timeline: at its start, and
// again when its cause changes (a broker away, then the ISR below
// min.insync.replicas), whether the producer or the metadata said so.
func (b *Board) sayBlocked(at time.Time, p *proc, first bool) {
	cause := b.blockedCause(p)
	// A cause already given, even in other words (the producer's, then
	// the metadata's figures), is no news; nor is falling back to one.
	if !first && (cause == "" || p.blockedSaid[causeName(cause)]) {
		return
	}
	// Short enough for one line of the events panel at 120 columns.
	text := fmt.Sprintf("blocked: %d buffered, no ack for %.1f s", p.buffered, at.Sub(p.blockedSince).Seconds())
	if !first {
		text = "still " + text
	}
	if cause != "" {
		text += ": " + cause
	}
	if p.blockedSaid == nil {
		p.blockedSaid = map[string]bool{}
	}
	p.blockedSaid[causeName(cause)] = true
	// While it retries an unreachable broker, that is the news.
	level := LevelBad
	if p.state == Retrying {
		level = LevelWarn
	}
	b.event(at, p.name, level, text)
}

// causeName is a cause's error name: "NOT_ENOUGH_REPLICAS (isr 1 < ...)"
// gives "NOT_ENOUGH_REPLICAS".
func causeName(cause string) string {
	name, _, _ := strings.Cut(cause, " (")
	return name
}

// blockedCause: why the producer is blocked, as far as the board knows:
// the broker's answer the producer reported (librdkafka's log of the
// produce error it retries), with the figures of the latest metadata when
// it is NOT_ENOUGH_REPLICAS and the metadata shows it too; the metadata's
// when the producer reported none, or only a client-side error ("Local:
// Broker transport failure": the broker it wrote to died, and since then
// the ISR shrank below min.insync.replicas, which is now why).
func (b *Board) blockedCause(p *proc) string {
	meta := b.NotEnoughReplicas()
	if b.acksLeader() {
		meta = "" // acks=1 is not refused below min.insync.replicas
	}
	switch {
	case p.blockedErr == "":
		return meta
	case meta != "" && (strings.HasPrefix(p.blockedErr, "NOT_ENOUGH_REPLICAS ") || strings.HasPrefix(p.blockedErr, "Local: ")):
		return meta
	}
	return p.blockedErr
}

// strategy is the process's role's strategy in words (its running
// incarnation's offset reset, else the next start's).
func (b *Board) strategy(p *proc) string {
	r, n, _ := role.Of(p.name)
	reset := b.reset
	if p.alive() && p.reset != "" {
		reset = p.reset
	}
	return r.Strategy.Say(reset, n)
}

func (b *Board) stateLabel(p *proc) (string, Level) {
	if label, level, ok := b.holdLabel(p); ok {
		return label, level
	}
	if label := stateLabels[p.state]; label != nil {
		return label(b, p)
	}
	return string(p.state), LevelInfo
}

// holdLabel is what holds a process that is up: frozen, backpressure, or
// its records blocked; ok false when nothing does.
func (b *Board) holdLabel(p *proc) (string, Level, bool) {
	if p.frozen && p.pending == "" {
		return "frozen", LevelBad, true
	}
	settled := p.alive() && p.pending == ""
	if bp := p.backpressureSince; settled && !bp.IsZero() && (p.state == Running || p.state == Retrying) {
		// At most 18 cells: "backpressure 59m59s".
		return "backpressure " + shortDuration(b.now.Sub(bp)), LevelWarn, true
	}
	// Retrying a dead broker first, then refused by the live ones (the
	// metadata shows the ISR below min.insync.replicas): the refusal is
	// what holds it now.
	refused := p.state == Retrying && b.NotEnoughReplicas() != ""
	if settled && !p.blockedSince.IsZero() && (p.state == Running || refused) {
		// At most 18 cells: "blocked, 99999 buf".
		return fmt.Sprintf("blocked, %d buf", p.buffered), LevelBad, true
	}
	return "", 0, false
}

// fixedLabel is a state's label that depends on nothing else.
func fixedLabel(label string, level Level) func(*Board, *proc) (string, Level) {
	return func(*Board, *proc) (string, Level) { return label, level }
}

// stateLabels give each state its label as shown.
var stateLabels = map[State]func(*Board, *proc) (string, Level){
	Running: func(_ *Board, p *proc) (string, Level) {
		if p.name == Producer && p.paused {
			return "running (paused)", LevelWarn
		}
		return "running", LevelGood
	},
	Replaying: func(b *Board, _ *proc) (string, Level) {
		_, _, frac := b.ReplayProgress()
		return fmt.Sprintf("replaying %d%%", percent(frac)), LevelWarn
	},
	Starting: fixedLabel("starting", LevelWarn),
	Retrying: func(_ *Board, p *proc) (string, Level) {
		if p.detail != "" {
			return "retrying " + p.detail, LevelWarn
		}
		return "retrying", LevelWarn
	},
	Stopping: fixedLabel("stopping", LevelWarn),
	Stopped:  fixedLabel("stopped", LevelInfo),
	Crashing: fixedLabel("crashing…", LevelBad),
	Crashed: func(_ *Board, p *proc) (string, Level) {
		if p.lastExit != nil {
			return "crashed (" + p.lastExit.Label() + ")", LevelBad
		}
		return "crashed", LevelBad
	},
	Restarting: fixedLabel("restarting", LevelWarn),
	Failed: func(_ *Board, p *proc) (string, Level) {
		if !p.alive() && p.detail != "" { // the launch failed: the cause
			return "failed: " + p.detail, LevelBad
		}
		return "failed", LevelBad
	},
}

// shortDuration is "0s", "42s", "3m05s", "42m" or, from 100 minutes, "99m+".
func shortDuration(d time.Duration) string {
	s := int(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 10*60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 100*60:
		return fmt.Sprintf("%dm", s/60)
	}
	return "99m+"
}

// percent shows progress without claiming 100% before it is done.
func percent(frac float64) int {
	p := int(frac * 100)
	return max(0, min(p, 99))
}

// Tail returns up to n stderr lines the board kept for a process (oldest
// first), across incarnations.
func (b *Board) Tail(name string, n int) []string {
	p := b.procs[name]
	if p == nil {
		return nil
	}
	l := p.logs
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return append([]string(nil), l...)
}
