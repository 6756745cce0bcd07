package board

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// A scaled consumer-usage runs up to MaxUsageInstances processes in one
// group: consumer-usage, consumer-usage-2, consumer-usage-3. Each is a row
// of its own, added and removed with ProcAdded and ProcRemoved; the first
// is always there (it is one of the Canonical processes).

// MaxUsageInstances bounds scaling (see role.MaxUsageInstances).
const MaxUsageInstances = role.MaxUsageInstances

// UsageInstance names consumer-usage's nth instance (1: consumer-usage).
func UsageInstance(n int) string { return role.UsageInstance(n) }

// UsageInstanceNumber is the n of UsageInstance(n) for a name, and whether
// the name is a consumer-usage instance at all.
func UsageInstanceNumber(name string) (int, bool) { return role.UsageInstanceNumber(name) }

// IsUsage reports whether name is an instance of consumer-usage.
func IsUsage(name string) bool {
	_, ok := UsageInstanceNumber(name)
	return ok
}

// UsageInstanceNames lists every name an instance may have, in order.
func UsageInstanceNames() []string {
	names := make([]string, MaxUsageInstances)
	for i := range names {
		names[i] = UsageInstance(i + 1)
	}
	return names
}

// ProcAdded: the dashboard defined another process (a consumer-usage
// instance when scaling up). Its row appears after its siblings.
type ProcAdded struct {
	Name string
	At   time.Time
}

// ProcRemoved: the dashboard removed a process it had added (scaled down,
// after stopping it). Its row goes; the timeline keeps its history.
type ProcRemoved struct {
	Name string
	At   time.Time
}

// EffectDelaySet: consumer-usage instance Name holds every usage write for
// Delay from now on (and from its next start).
type EffectDelaySet struct {
	Name  string
	At    time.Time
	Delay time.Duration
}

func (b *Board) procAdded(v ProcAdded) {
	if v.Name == "" || b.procs[v.Name] != nil {
		return
	}
	b.procs[v.Name] = newProc(v.Name, Stopped)
	// A consumer-usage instance goes after the instances numbered below
	// it (consumer-usage-2 right after consumer-usage); anything else last.
	at := len(b.order)
	if k, ok := UsageInstanceNumber(v.Name); ok {
		for i, n := range b.order {
			if j, ok := UsageInstanceNumber(n); ok && j < k {
				at = i + 1
			}
		}
	}
	b.order = slices.Insert(b.order, at, v.Name)
	b.event(v.At, v.Name, LevelAction, "added to the dashboard")
}

func (b *Board) procRemoved(v ProcRemoved) {
	if b.procs[v.Name] == nil || slices.Contains(Canonical, v.Name) {
		return
	}
	delete(b.procs, v.Name)
	delete(b.lagHist, v.Name)
	delete(b.statusHist, v.Name)
	b.order = slices.DeleteFunc(b.order, func(n string) bool { return n == v.Name })
	b.event(v.At, v.Name, LevelAction, "removed from the dashboard")
}

func (b *Board) effectDelaySet(v EffectDelaySet) {
	p := b.procs[v.Name]
	if p == nil || p.usage == nil {
		return
	}
	p.usage.delayCfg = v.Delay
	at := v.At
	if at.IsZero() {
		at = b.now
	}
	b.event(at, v.Name, LevelAction, "effect delay "+delayWords(v.Delay)+" (from now on and at its next starts)")
}

// UsageInstances lists the consumer-usage instances the board shows, in
// order (consumer-usage first).
func (b *Board) UsageInstances() []string {
	var out []string
	for _, n := range b.order {
		if IsUsage(n) {
			out = append(out, n)
		}
	}
	return out
}

// Scaled reports whether more than one consumer-usage instance is shown.
func (b *Board) Scaled() bool { return len(b.UsageInstances()) > 1 }

// EffectDelay is how instance name is to hold its writes from its next
// start (what the dashboard asked for; 0: none).
func (b *Board) EffectDelay(name string) time.Duration {
	if p := b.procs[name]; p != nil && p.usage != nil {
		return p.usage.delayCfg
	}
	return 0
}

// scaleStatus takes the rebalance and effect events of a consumer-usage
// instance; it reports whether it handled e.
func (b *Board) scaleStatus(p *proc, at time.Time, e status.Event) bool {
	name := p.name
	switch e.Type {
	case status.Assigned, status.Revoked:
		return b.scaleRebalance(p, at, e)
	case status.EffectHeld:
		w := Write{At: at, Partition: e.Partition, Offset: e.Offset, Count: e.Count}
		p.usage.held = slices.DeleteFunc(p.usage.held, func(h Write) bool { return h.Partition == w.Partition })
		p.usage.held = append(p.usage.held, w)
		b.event(at, name, LevelWarn, fmt.Sprintf("write %s held %s (in flight)", where(e), delayWords(time.Duration(e.Millis)*time.Millisecond)))
	case status.LateWrite:
		b.lateWrite(p, at, e)
	case status.Skipped:
		b.noteReset(at, name, e)
	case status.EffectRefused:
		p.usage.prevented += e.Count
		b.event(at, name, LevelGood, fmt.Sprintf("refused %s at %s", Plural(e.Count, "second effect"), at1(e)))
	case status.CommitRejected:
		b.event(at, name, LevelWarn, fmt.Sprintf("commit refused (%s): %s; not progress: the next owner replays from the last accepted commit",
			e.Reason, e.Error))
	case status.EffectDelay:
		p.usage.delay, p.usage.delayKnown = time.Duration(e.Millis)*time.Millisecond, true
		p.usage.held = nil
		b.event(at, name, LevelInfo, "holds every usage write "+delayWords(p.usage.delay))
	default:
		return false
	}
	return true
}

// scaleRebalance tracks an instance's partitions whatever the consumer says
// of its membership; a consumer that says nothing of it (no member, no
// generation) gets the generic timeline line. It reports whether it
// handled e (an assignment always goes on to the generic handling:
// redelivery, state).
func (b *Board) scaleRebalance(p *proc, at time.Time, e status.Event) bool {
	described := e.Member != "" || e.Generation != 0
	if e.Member != "" {
		p.usage.member = e.Member
	}
	if described {
		p.usage.generation = e.Generation
	}
	r := &Rebalance{At: at, Partitions: slices.Clone(e.Partitions), Generation: e.Generation,
		InFlight: e.InFlight, Took: time.Duration(e.Millis) * time.Millisecond}
	if e.Type == status.Revoked {
		p.usage.lastRevoke = r
		p.usage.partitions, p.revoked = []int32{}, true
		if described {
			b.sayRevoked(p.name, at, e)
		}
		return described
	}
	r.Start = map[int32]int64{}
	for _, pos := range e.Positions {
		r.Start[pos.Partition] = pos.Offset
	}
	p.usage.lastAssign = r
	b.noteTake(p.name, at, e.Partitions)
	b.noteStartAfterExpiry(at, p.name, p.groupID, r.Start)
	p.usage.partitions = slices.Sorted(slices.Values(e.Partitions))
	if p.usage.partitions == nil {
		p.usage.partitions = []int32{}
	}
	if described {
		text := fmt.Sprintf("assigned %s member %s gen %d", partitionList(e.Partitions), ShortMember(e.Member), e.Generation)
		if b.assignEndsRevoke(e.Generation) {
			// How long the group's partitions were between owners.
			text += fmt.Sprintf(", %.2f s after the revoke", at.Sub(b.rebalanceFrom).Seconds())
		}
		b.event(at, p.name, LevelInfo, text)
	}
	return false
}

// assignEndsRevoke says whether an assignment in generation gen ends the
// rebalance the latest revoke began: the first generation after it, and
// every member's assignment in that generation.
func (b *Board) assignEndsRevoke(gen int32) bool {
	if b.rebalanceFrom.IsZero() || gen <= b.rebalanceGen {
		return false
	}
	if b.rebalanceTo == 0 {
		b.rebalanceTo = gen
	}
	return gen == b.rebalanceTo
}

func (b *Board) sayRevoked(name string, at time.Time, e status.Event) {
	if b.rebalanceFrom.IsZero() || e.Generation > b.rebalanceGen {
		// The first revoke of a rebalance starts it.
		b.rebalanceFrom, b.rebalanceGen, b.rebalanceTo = at, e.Generation, 0
	}
	text := fmt.Sprintf("revoked %s gen %d", partitionList(e.Partitions), e.Generation)
	if e.InFlight > 0 {
		text += fmt.Sprintf(", %s in flight (written after the revoke)", Plural(e.InFlight, "message"))
	}
	b.event(at, name, LevelInfo, text)
}

// lateWrite takes a write made after its partition was revoked; its
// refused records come in no EffectRefused of their own.
func (b *Board) lateWrite(p *proc, at time.Time, e status.Event) {
	p.usage.late += e.Count
	p.usage.prevented += e.Prevented
	w := Write{At: at, Partition: e.Partition, Offset: e.Offset, Count: e.Count, Refused: e.Prevented}
	p.usage.lates = slices.DeleteFunc(p.usage.lates, func(l Write) bool { return l.Partition == w.Partition })
	p.usage.lates = append(p.usage.lates, w)
	text := fmt.Sprintf("late write %s (%s", at1(e), Plural(e.Count, "message"))
	if e.Prevented > 0 {
		text += fmt.Sprintf(", %d refused as a second effect", e.Prevented)
	}
	// Guarded: a late record is one effect either way (refused, or
	// the only one); naive: the new owner's replay counts it again.
	level := LevelWarn
	if p.mode == "naive" {
		level, text = LevelBad, text+"; counted again by the replay"
	}
	b.event(at, p.name, level, text+")")
}

// where is "p1@42", or "p1@42 (3 messages)" for a batch.
func where(e status.Event) string {
	if e.Count > 1 {
		return fmt.Sprintf("%s (%d messages)", at1(e), e.Count)
	}
	return at1(e)
}

func at1(e status.Event) string { return fmt.Sprintf("p%d@%d", e.Partition, e.Offset) }

// Plural is a count in words: "1 message", "2 messages" (what takes an s).
func Plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return Count(n) + " " + what + "s"
}

// Count is a count with thousands separators: 12,345.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func delayWords(d time.Duration) string {
	if d <= 0 {
		return "off"
	}
	return d.String()
}

// ShortMember shortens a group member id for the screen: its end (static
// members' ids start with their instance id, already the row's name;
// dynamic ones with the client id, the same for all). The report keeps
// them whole.
func ShortMember(m string) string {
	const tail = 8
	r := []rune(m)
	if len(r) <= tail+1 {
		return m
	}
	return "…" + string(r[len(r)-tail:])
}

// ownedLag is a consumer-usage instance's lag over the partitions it owns
// now, from the group's committed offsets: used once the group is scaled,
// where the group's total belongs to no single row.
func (b *Board) ownedLag(p *proc) Lag {
	l := Lag{Applies: true, Stale: b.hwmErr != nil || b.commitRead.err != nil}
	switch {
	case !p.alive():
		l.Down = true
		return l
	case len(p.usage.partitions) == 0 || b.hwm == nil || b.hwmBeforeQuiet() || !b.commitRead.seen ||
		(p.groupID != "" && b.commitGroup != "" && p.groupID != b.commitGroup):
		l.NoData = true
		return l
	}
	for _, part := range p.usage.partitions {
		hwm, ok := b.hwm[part]
		c, cok := b.committed[part]
		if !ok || !cok || c < 0 {
			if hwm > 0 || !ok {
				l.Unknown = append(l.Unknown, part)
			}
			continue
		}
		l.Messages += max(0, hwm-c)
	}
	return l
}

// GroupLag is the lag of consumer-usage's whole group (every partition),
// whichever instance owns what.
func (b *Board) GroupLag() Lag { return b.usageLag() }

// partitionsOf is a copy of the partitions an instance owns (nil when not
// known, empty when it owns none).
func partitionsOf(p *proc) []int32 {
	if p.usage.partitions == nil {
		return nil
	}
	return slices.Clone(p.usage.partitions)
}

// groupSettled: the live consumer-usage instances between them own every
// partition of the topic, each exactly once, and none is between a revoke
// and its next assignment. A group mid-rebalance, or with partitions of a
// member that is gone not yet handed to another, is not caught up even
// where its commits reach the watermarks. Before an instance said what it
// owns (partitions unknown) on an unscaled board, it holds.
func (b *Board) groupSettled() bool {
	names := b.UsageInstances()
	if len(names) <= 1 {
		if p := b.procs[Usage]; p == nil || p.usage.partitions == nil {
			return true
		}
	}
	owners := map[int32]int{}
	for _, n := range names {
		p := b.procs[n]
		if !p.alive() {
			continue
		}
		if p.pending != "" || p.revoked || p.usage.partitions == nil || p.state == Retrying {
			return false
		}
		for _, part := range p.usage.partitions {
			owners[part]++
		}
	}
	for part := range b.hwm {
		if owners[part] != 1 {
			return false
		}
	}
	return len(b.hwm) > 0
}
