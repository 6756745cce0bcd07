package board

import (
	"fmt"
	"time"
)

// Frozen is the state of a process whose group was SIGSTOPped (z, the
// freeze script action): alive, holding its pid and sockets, doing nothing.
const Frozen State = "frozen"

// Operations of a Request that freeze or thaw a process (z, freeze/thaw).
const (
	OpFreeze = "freeze"
	OpThaw   = "thaw"
)

// ProcFrozen: the supervisor SIGSTOPped a child's process group (Frozen
// true) or SIGCONTed it (false). An exit or a new start ends a freeze too.
type ProcFrozen struct {
	Name   string
	PID    int
	At     time.Time
	Frozen bool
}

// HealthProbe: one poll of a consumer's GET /healthz. Code is the HTTP
// status (0 when there was no answer, Err says why); Status and StuckFor
// are from the body (health.Report).
type HealthProbe struct {
	Name       string
	PID        int // the incarnation asked; answers of an earlier one are ignored
	At         time.Time
	Code       int
	Status     string
	StuckFor   time.Duration
	StuckAfter time.Duration
	Err        error
}

// Health words of a process, as the report gives them.
const (
	HealthOK     = "ok"
	HealthStuck  = "stuck"
	HealthDown   = "down"
	HealthFrozen = "frozen"
)

// DefaultStuckAfter is how long a consumer may not answer its /healthz
// before the board calls it stuck, when it never said its own bound.
const DefaultStuckAfter = 10 * time.Second

// HealthView is a process's health as shown beside its state.
type HealthView struct {
	// Word is HealthOK, HealthStuck, HealthDown or HealthFrozen; "" while
	// a live consumer's health is not known yet.
	Word string
	// For: how long it has been stuck (HealthStuck only).
	For time.Duration
	// Label: "ok", "stuck 12s", "down", "frozen", "…" (not known yet),
	// "alive" (HealthOK of a process judged by liveness only).
	Label string
	Level Level
	// Probed: the word comes from the consumer's own /healthz (consumer-
	// current, consumer-usage); other processes are judged by liveness.
	Probed bool
}

// probed: the processes whose /healthz the lab polls.
func probed(name string) bool { return name == Current || IsUsage(name) }

// healthState is what the board keeps of one process's health polls.
type healthState struct {
	pid        int
	last       *HealthProbe // latest probe of pid
	answeredAt time.Time    // latest probe of pid with an answer
	stuckAfter time.Duration
	firstAt    time.Time // first probe of pid
}

func (b *Board) procFrozen(v ProcFrozen) {
	p := b.procs[v.Name]
	if p == nil || v.PID != p.pid || p.frozen == v.Frozen {
		return
	}
	p.frozen = v.Frozen
	if v.Frozen {
		p.frozenAt = v.At
		b.event(v.At, v.Name, LevelWarn, fmt.Sprintf("frozen (SIGSTOP to pid %d's group): it holds its sockets and does nothing; z thaws it", v.PID))
		return
	}
	// Probes while it was frozen went unanswered: judge it afresh.
	p.health = healthState{}
	p.thawedAt = v.At
	b.event(v.At, v.Name, LevelGood, fmt.Sprintf("thawed (SIGCONT to pid %d's group)", v.PID))
}

func (b *Board) healthProbe(v HealthProbe) {
	p := b.procs[v.Name]
	if p == nil || v.PID == 0 || v.PID != p.pid {
		return
	}
	h := &p.health
	if h.pid != v.PID {
		*h = healthState{pid: v.PID, firstAt: v.At}
	}
	prev := h.last
	probe := v
	h.last = &probe
	if v.Code != 0 {
		h.answeredAt = v.At
		if v.StuckAfter > 0 {
			h.stuckAfter = v.StuckAfter
		}
	}
	was := ""
	if prev != nil {
		was = prev.Status
	}
	switch {
	case v.Code != 0 && v.Status == HealthStuck && was != HealthStuck:
		b.event(v.At, v.Name, LevelBad, fmt.Sprintf("/healthz: stuck (%s with lag and no progress)", roundDur(v.StuckFor)))
	case v.Code != 0 && v.Status != HealthStuck && was == HealthStuck:
		b.event(v.At, v.Name, LevelGood, "/healthz: ok again (making progress)")
	}
}

// healthOf is a process's health as of the board's clock.
func (b *Board) healthOf(p *proc) HealthView {
	// The user's consumer-usage serves no /healthz: judged by liveness.
	v := HealthView{Probed: probed(p.name) && !(IsUsage(p.name) && b.cfg.UsageCmd != "")}
	switch {
	case !p.alive() || p.state == Failed:
		// A failed process does no work any more; its exit follows.
		v.Word = HealthDown
	case p.frozen:
		v.Word = HealthFrozen
	case !v.Probed:
		v.Word = HealthOK
	default:
		v.Word, v.For = b.probedHealth(p)
	}
	switch v.Word {
	case HealthOK:
		v.Label, v.Level = "ok", LevelGood
		if !v.Probed {
			// Judged by liveness only: say so rather than vouch for it.
			v.Label, v.Level = "alive", LevelInfo
		}
	case HealthDown:
		v.Label, v.Level = "down", LevelMuted
	case HealthFrozen:
		v.Label, v.Level = "frozen", LevelBad
	case HealthStuck:
		v.Label, v.Level = "stuck "+shortDur(v.For), LevelBad
	default:
		v.Label, v.Level = "…", LevelMuted
	}
	return v
}

// probedHealth judges a live consumer by its /healthz: its own answer
// (stuck with the time it said, grown by the probe's age), or, when it has
// not answered for longer than its stuck bound, stuck since its last
// answer: a process that cannot answer is not making progress either.
func (b *Board) probedHealth(p *proc) (string, time.Duration) {
	h := p.health
	if h.pid != p.pid || h.last == nil {
		return "", 0
	}
	bound := h.stuckAfter
	if bound <= 0 {
		bound = DefaultStuckAfter
	}
	since := h.answeredAt
	if since.IsZero() {
		since = h.firstAt
	}
	if h.last.Code == 0 && b.now.Sub(since) >= bound {
		return HealthStuck, b.now.Sub(since)
	}
	if h.answeredAt.IsZero() {
		return "", 0
	}
	if h.last.Code != 0 && h.last.Status == HealthStuck {
		return HealthStuck, h.last.StuckFor + max(0, b.now.Sub(h.last.At))
	}
	return HealthOK, 0
}

// shortDur fits "stuck " + it in 9 cells: 12s, 3m, 2h.
func shortDur(d time.Duration) string {
	switch s := int(d / time.Second); {
	case s < 100:
		return fmt.Sprintf("%ds", max(s, 0))
	case s < 100*60:
		return fmt.Sprintf("%dm", s/60)
	default:
		return fmt.Sprintf("%dh", s/3600)
	}
}

func roundDur(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

func freezeText(op string) string {
	if op == OpFreeze {
		return "freeze requested (SIGSTOP to its process group)"
	}
	return "thaw requested (SIGCONT to its process group)"
}
