package board

import (
	"fmt"
	"path/filepath"
	"regexp"
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

// proc is one process's lifecycle as the board knows it, and what its
// role reports about its work (nil for the other roles).
type proc struct {
	name      string
	state     State
	prevState State // state before a pending request, restored if it fails
	pending   string
	pendingAt time.Time // when pending was asked for
	pid       int
	startedAt time.Time
	starts    int
	crashes   int
	lastExit  *Exit
	detail    string

	// From the Started event.
	mode, reset, groupID string
	httpAddr             string

	// From Progress events of the current incarnation.
	positions   []status.Position
	positionsAt time.Time // when positions (and their watermarks) were reported
	processed   int64
	invalid     int64
	lastInvalid string // reason of the latest invalid message it skipped

	armed     string
	lastCrash *CrashPointHit
	// lastError: the latest Error event of this incarnation (the reason a
	// failed or crashed process gives), kept until the next start.
	lastError string
	// revoked: the consumer's partitions were revoked and it has not been
	// assigned any since (it holds none now).
	revoked bool
	// newGroup: this incarnation started with reset earliest in a group no
	// process started in before: a group without committed offsets, so it
	// reads from the beginning of the topic.
	newGroup bool

	// frozen: the current incarnation is SIGSTOPped (health.go); frozenAt
	// and thawedAt: its latest freeze and thaw.
	frozen             bool
	frozenAt, thawedAt time.Time
	health             healthState

	logs     []string
	logSince int // index in logs where the current incarnation's lines start

	producer *producerFacts
	current  *currentFacts
	usage    *usageFacts
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
	if p.current != nil && !p.current.caughtUp {
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
	p.processed, p.invalid = 0, 0
	p.lastError = ""
	p.revoked = false
	p.lastInvalid = ""
	p.frozen, p.health = false, healthState{}
	p.frozenAt, p.thawedAt = time.Time{}, time.Time{}
	p.startFacts()
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
	if f := p.producer; f != nil && v.PID == p.pid {
		f.quietSince = v.At
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
	p.exitFacts()
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
		if f := p.producer; f != nil && (f.pauseAsked != "" || f.paused != (v.Op == OpPause)) {
			f.pauseAsked = v.Op
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
		if f := p.producer; f != nil && (v.Op == OpPause || v.Op == OpResume) {
			f.pauseAsked = ""
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

// sayBlocked puts the producer's block on the timeline: at its start, and
// again when its cause changes (a broker away, then the ISR below
// min.insync.replicas), whether the producer or the metadata said so.
func (b *Board) sayBlocked(at time.Time, p *proc, first bool) {
	cause := b.blockedCause(p)
	// A cause already given, even in other words (the producer's, then
	// the metadata's figures), is no news; nor is falling back to one.
	if !first && (cause == "" || p.producer.blockedSaid[causeName(cause)]) {
		return
	}
	// Short enough for one line of the events panel at 120 columns.
	text := fmt.Sprintf("blocked: %d buffered, no ack for %.1f s", p.producer.buffered, at.Sub(p.producer.blockedSince).Seconds())
	if !first {
		text = "still " + text
	}
	if cause != "" {
		text += ": " + cause
	}
	if p.producer.blockedSaid == nil {
		p.producer.blockedSaid = map[string]bool{}
	}
	p.producer.blockedSaid[causeName(cause)] = true
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
	case p.producer.blockedErr == "":
		return meta
	case meta != "" && (strings.HasPrefix(p.producer.blockedErr, "NOT_ENOUGH_REPLICAS ") || strings.HasPrefix(p.producer.blockedErr, "Local: ")):
		return meta
	}
	return p.producer.blockedErr
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
	if u := p.usage; settled && u != nil && !u.backpressureSince.IsZero() && (p.state == Running || p.state == Retrying) {
		// At most 18 cells: "backpressure 59m59s".
		return "backpressure " + shortDuration(b.now.Sub(u.backpressureSince)), LevelWarn, true
	}
	// Retrying a dead broker first, then refused by the live ones (the
	// metadata shows the ISR below min.insync.replicas): the refusal is
	// what holds it now.
	refused := p.state == Retrying && b.NotEnoughReplicas() != ""
	if f := p.producer; settled && f != nil && !f.blockedSince.IsZero() && (p.state == Running || refused) {
		// At most 18 cells: "blocked, 99999 buf".
		return fmt.Sprintf("blocked, %d buf", f.buffered), LevelBad, true
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
		if p.name == Producer && p.producer.paused {
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
