package board

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

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
	if IsUsage(v.Name) && b.cfg.UsageCmd != "" {
		p.state = Running
	}
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
