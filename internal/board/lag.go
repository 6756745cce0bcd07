package board

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// Lag is a consumer's distance from the end of the topic, in messages.
//
// consumer-usage's lag is the broker's view: per partition the latest high
// watermark minus the committed offset, summed. It is recomputed from the
// latest watermarks every time, so it keeps growing while the consumer is
// dead. consumer-current never commits: its lag comes from the positions it
// reports itself, so while it is down there is none to show.
type Lag struct {
	// Applies is false for processes without Kafka lag (producer, query,
	// broker, store).
	Applies bool
	// Messages sums the partitions whose position is known.
	Messages int64
	// Unknown lists partitions that hold messages but have no known position
	// (no commit yet): their lag is unknown, not 0.
	Unknown []int32
	// Down: consumer-current is not running, so it has no position.
	Down bool
	// NoData: no usable sample yet (no watermarks, no commits of the
	// consumer's group, no position report).
	NoData bool
	// Stale: the latest poll failed; the numbers come from older samples.
	Stale bool
}

// Known reports whether Messages is the whole lag.
func (l Lag) Known() bool {
	return l.Applies && !l.Down && !l.NoData && len(l.Unknown) == 0
}

func (b *Board) offsets(v Offsets) {
	if b.before(v.At) {
		return
	}
	if v.Err != nil {
		if b.hwmErr == nil {
			b.hwmErrSince = v.At
			b.hwmErrLeaderMoved = leaderCatchingUp(v.Err)
			if !b.hwmErrLeaderMoved {
				b.pollFailed(v.At, "", "reading the topic's offsets failed: ", v.Err)
			}
		} else if b.hwmErrLeaderMoved && v.At.Sub(b.hwmErrSince) > StaleAfter {
			// Longer than a leader change's poll or two: said after all.
			b.hwmErrLeaderMoved = false
			b.pollFailed(v.At, "", fmt.Sprintf("reading the topic's offsets fails for %.0f s: ", v.At.Sub(b.hwmErrSince).Seconds()), v.Err)
		}
		b.hwmErr = v.Err
		return
	}
	if b.hwmErr != nil && !b.hwmErrLeaderMoved {
		b.event(v.At, "", LevelInfo, "reading the topic's offsets works again")
		b.brokerAwayNoted = false
	}
	b.hwmErrLeaderMoved = false
	b.hwmErr = nil
	b.hwm = maps.Clone(v.HighWatermarks)
	if b.hwm == nil {
		b.hwm = map[int32]int64{}
	}
	b.hwmAt = v.At
	b.logStarts(v.At, v.LogStarts)
	b.noteWritten(v)
	b.hwmHistory = append(b.hwmHistory, hwmSample{at: v.At, hwm: b.hwm})
	if over := len(b.hwmHistory) - HistoryLen; over > 0 {
		b.hwmHistory = append([]hwmSample(nil), b.hwmHistory[over:]...)
	}
}

// sampleLag records one lag sample per consumer for the sparklines. It runs
// on Tick, at most once per SampleEvery of board time, so every sample sees
// all the inputs of its interval whatever order the pollers deliver them in.
func (b *Board) sampleLag() {
	if b.hwm == nil || (!b.sampledAt.IsZero() && b.now.Sub(b.sampledAt) < SampleEvery) {
		return
	}
	b.sampledAt = b.now
	for _, name := range append(b.UsageInstances(), Current) {
		if b.procs[name] == nil {
			continue
		}
		l := b.lagOf(name)
		s := int64(-1)
		if l.Known() {
			s = l.Messages
		}
		h := append(b.lagHist[name], s)
		if over := len(h) - HistoryLen; over > 0 {
			h = append([]int64(nil), h[over:]...)
		}
		b.lagHist[name] = h
		sh := append(b.statusHist[name], lagSample{lag: s, consumed: b.consumed(name)})
		if over := len(sh) - StatusWindow; over > 0 {
			sh = append([]lagSample(nil), sh[over:]...)
		}
		b.statusHist[name] = sh
	}
}

// pollFailed reports a failed poll of the dashboard's own broker clients.
// While the broker is known to be away its failures say nothing new: one
// event says what pauses, instead of one raw client error per poller.
func (b *Board) pollFailed(at time.Time, name, what string, err error) {
	if !b.brokerKnownAway() {
		b.event(at, name, LevelWarn, what+err.Error())
		return
	}
	if !b.brokerAwayNoted {
		b.brokerAwayNoted = true
		text := "broker unreachable: lag, committed offsets and the audit wait until it is back"
		if len(b.clusterBrokers()) > 0 && !b.brokerDown() {
			// One broker of a cluster: a failover, not an outage.
			text = "a broker of the cluster is unreachable: lag, committed offsets and the audit wait for its partitions' new leaders"
		}
		b.event(at, "", LevelWarn, text)
	}
}

// brokerKnownAway: the supervised broker (or one of a cluster's) is not
// up, or a client of it reports it unreachable.
func (b *Board) brokerKnownAway() bool {
	if b.brokerDown() {
		return true
	}
	for _, p := range b.clusterBrokers() {
		if p.down() { // its partitions are changing leader
			return true
		}
	}
	for _, n := range append([]string{Producer, Current}, b.UsageInstances()...) {
		if p := b.procs[n]; p != nil && p.state == Retrying && p.detail == "kafka" {
			return true
		}
	}
	return false
}

func (b *Board) committedOffsets(v Committed) {
	if v.Err != nil {
		if b.commitRead.err == nil {
			b.pollFailed(v.At, Usage, "reading committed offsets failed: ", v.Err)
		}
		b.commitRead.err = v.Err
		return
	}
	b.commitRead.err = nil
	if !b.before(v.At) { // a read asked before the topic was recreated says nothing of its commits now
		b.noteCommits(v.At, v.Group, v.Offsets)
	}
	b.committed = maps.Clone(v.Offsets)
	b.commitGroup = v.Group
	b.commitRead.at = v.At
	b.commitRead.seen = true
}

func (b *Board) lagOf(name string) Lag {
	if p := b.procs[name]; p != nil && IsUsage(name) && b.Scaled() {
		return b.ownedLag(p)
	}
	switch role.Lookup(name).Lag {
	case role.LagCommitted:
		return b.usageLag()
	case role.LagPositions:
		return b.currentLag()
	}
	return Lag{}
}

// commitsApply reports whether the latest committed offsets belong to the
// group consumer-usage runs with (a reset to earliest uses a fresh group).
func (b *Board) commitsApply() bool {
	if !b.commitRead.seen {
		return false
	}
	p := b.procs[Usage]
	return p == nil || p.groupID == "" || b.commitGroup == "" || p.groupID == b.commitGroup
}

// hwmBeforeQuiet: the latest watermarks were read before the producer
// last stopped publishing (a pause, an exit). A lag from them misses what it
// published last: read right after `p`, it said 0 while the final batch was
// still to be consumed, and a crash point armed on that 0 fired at once.
// The next poll (every 500 ms) settles it; a failing poll is shown stale.
func (b *Board) hwmBeforeQuiet() bool {
	prod := b.procs[Producer]
	return b.hwmErr == nil && prod != nil && !prod.producer.quietSince.IsZero() && !b.hwmAt.After(prod.producer.quietSince)
}

func (b *Board) usageLag() Lag {
	l := Lag{Applies: true, Stale: b.hwmErr != nil || b.commitRead.err != nil}
	if b.hwm == nil || !b.commitsApply() || b.hwmBeforeQuiet() {
		l.NoData = true
		return l
	}
	for _, part := range slices.Sorted(maps.Keys(b.hwm)) {
		hwm := b.hwm[part]
		c, ok := b.committed[part]
		if !ok || c < 0 {
			if hwm > 0 {
				l.Unknown = append(l.Unknown, part)
			}
			continue
		}
		// A watermark older than the commit would give a negative lag.
		l.Messages += max(0, hwm-c)
	}
	return l
}

// positionsQuietAfter is how long consumer-current may go without
// reporting its positions (it does every 250-500 ms) before its lag is
// read against the polled watermarks instead of its own.
const positionsQuietAfter = 1500 * time.Millisecond

func (b *Board) currentLag() Lag {
	p := b.procs[Current]
	l := Lag{Applies: true, Stale: b.hwmErr != nil}
	switch {
	case !p.alive():
		l.Down = true
		return l
	case len(p.positions) == 0 || b.hwmBeforeQuiet():
		l.NoData = true
		return l
	}
	// Its own report pairs each position with the watermark it fetched
	// with, one instant; the watermarks polled 0-500 ms later would add a
	// batch it had not been offered yet, and the cell would flicker between
	// 0 and an interval's messages while it keeps up. The polled ones count
	// only when it stopped reporting: then its position is where it stays.
	polled := b.hwmAt.Sub(p.positionsAt) > positionsQuietAfter
	seen := map[int32]bool{}
	for _, pos := range p.positions {
		seen[pos.Partition] = true
		hwm := pos.HighWatermark
		if h, ok := b.hwm[pos.Partition]; ok && h > hwm && (polled || hwm < 0) {
			hwm = h
		}
		// Before its first fetch a partition's position is invalid (<0):
		// consumer-current reads from earliest, so that is the start.
		l.Messages += max(0, hwm-max(0, pos.Offset))
	}
	for _, part := range slices.Sorted(maps.Keys(b.hwm)) {
		if !seen[part] && b.hwm[part] > 0 {
			l.Unknown = append(l.Unknown, part)
		}
	}
	return l
}

// ReplayProgress is consumer-current's rebuild progress: the sum of its
// positions over the sum of the high watermarks it is reading up to. frac
// is 1 once it reported CaughtUp.
func (b *Board) ReplayProgress() (done, total int64, frac float64) {
	p := b.procs[Current]
	if p == nil {
		return 0, 0, 0
	}
	for _, pos := range p.positions {
		hwm := pos.HighWatermark
		if hwm <= 0 {
			hwm = b.hwm[pos.Partition]
		}
		done += min(max(0, pos.Offset), max(0, hwm))
		total += max(0, hwm)
	}
	switch {
	case p.current.caughtUp:
		return done, total, 1
	case total > 0:
		return done, total, float64(done) / float64(total)
	}
	return done, total, 0
}

// CaughtUp reports whether both consumers are done catching up, as of the
// latest samples: consumer-current reported CaughtUp since it last started,
// and consumer-usage is running with a known lag of 0. While the producer
// publishes, a lag of exactly 0 is rare (commits are periodic), so
// consumer-usage also counts as caught up when its committed offsets have
// reached every high watermark seen in one sample taken after it started.
// A process the board does not supervise is not waited for. While a
// pause is asked and not yet confirmed the producer is still flushing its
// buffer: nothing is caught up until it says it has paused.
func (b *Board) CaughtUp() bool {
	return b.producerOrCurrentBehind() == "" && (b.procs[Usage] == nil || b.UsageCaughtUp())
}

// producerOrCurrentBehind is CaughtUp's rule for the producer's pause and
// consumer-current: what keeps it false, in words ("" when neither does).
func (b *Board) producerOrCurrentBehind() string {
	if p := b.procs[Producer]; p != nil && p.alive() && p.producer.pauseAsked == OpPause {
		return "the producer has not confirmed its pause (still flushing)"
	}
	if p := b.procs[Current]; p != nil {
		switch {
		case !p.alive() || p.pending != "":
			return Current + " is not running"
		case p.state == Retrying:
			return Current + " is retrying the broker"
		case !p.current.caughtUp:
			return Current + " has not caught up"
		}
	}
	return ""
}

// Behind says what keeps CaughtUp false, in words ("" when caught up),
// for a wait that gives up: which process and which rule.
func (b *Board) Behind() string {
	if why := b.producerOrCurrentBehind(); why != "" {
		return why
	}
	p := b.procs[Usage]
	if p == nil || b.UsageCaughtUp() {
		return ""
	}
	if why := b.usageUnready(p, b.usageLag()); why != "" {
		return why
	}
	return fmt.Sprintf("%s's committed offsets %v have not reached the high watermarks %v (sampled %s)%s",
		Usage, b.committed, b.hwm, b.hwmAt.Format("15:04:05.0"), b.currentBehind())
}

// currentBehind names consumer-current's reported positions when they
// are short of the high watermarks.
func (b *Board) currentBehind() string {
	p := b.procs[Current]
	if p == nil {
		return ""
	}
	reached := map[int32]int64{}
	for _, pos := range p.positions {
		reached[pos.Partition] = pos.Offset
	}
	for part, h := range b.hwm {
		if h > 0 && reached[part] < h {
			return fmt.Sprintf("; %s's positions %v", Current, reached)
		}
	}
	return ""
}

// UsageCaughtUp is CaughtUp's rule for consumer-usage alone: running, with a
// known lag of 0, or committed offsets that reached every high watermark of
// one sample taken after it started.
func (b *Board) UsageCaughtUp() bool {
	p := b.procs[Usage]
	if p == nil {
		return false
	}
	l := b.usageLag()
	if b.usageUnready(p, l) != "" {
		return false
	}
	if prod := b.procs[Producer]; prod != nil && (prod.producer.paused || !prod.alive()) {
		return b.settled(prod.producer.quietSince)
	}
	if l.Messages == 0 {
		return true
	}
	for i := len(b.hwmHistory) - 1; i >= 0; i-- {
		s := b.hwmHistory[i]
		if s.at.Before(p.startedAt) {
			break
		}
		if b.commitsReach(s.hwm) {
			return true
		}
	}
	return false
}

// usageUnready is what keeps UsageCaughtUp false whatever the offsets, in
// words ("" when nothing does). Committed offsets can equal the high
// watermarks while it holds no partition at all (a broker just back,
// before the producer's buffer lands): that is not caught up.
func (b *Board) usageUnready(p *proc, l Lag) string {
	switch {
	case !p.alive() || p.pending != "":
		return Usage + " is not running"
	case p.revoked || p.state == Retrying:
		return Usage + " holds no partition (revoked or retrying the broker)"
	case !b.groupSettled():
		return Usage + "'s group has not settled: not every partition has one running owner"
	case l.NoData || l.Stale || len(l.Unknown) > 0:
		return fmt.Sprintf("%s's lag is not known (no data %v, stale %v, unknown partitions %v)", Usage, l.NoData, l.Stale, l.Unknown)
	}
	return ""
}

// settled is the strict form of CaughtUp once the producer is quiet: a
// watermark sample taken after it stopped publishing, reached by
// consumer-usage's commits and by consumer-current's reported positions.
// Only then do the consumers' answers cover the whole topic.
func (b *Board) settled(quietSince time.Time) bool {
	if quietSince.IsZero() || !b.hwmAt.After(quietSince) || b.hwmErr != nil || !b.commitsReach(b.hwm) {
		return false
	}
	if p := b.procs[Current]; p != nil {
		reached := map[int32]int64{}
		for _, pos := range p.positions {
			reached[pos.Partition] = pos.Offset
		}
		for part, h := range b.hwm {
			if h > 0 && reached[part] < h {
				return false
			}
		}
	}
	return true
}

func (b *Board) commitsReach(hwm map[int32]int64) bool {
	for part, h := range hwm {
		if h <= 0 {
			continue
		}
		if c, ok := b.committed[part]; !ok || c < h {
			return false
		}
	}
	return true
}

// Committed returns the latest committed offsets of consumer-usage's group
// (nil before the first successful poll), the group they belong to, and
// whether they are the group consumer-usage runs with now.
func (b *Board) Committed() (offsets map[int32]int64, group string, current bool) {
	return maps.Clone(b.committed), b.commitGroup, b.commitsApply()
}

// HighWatermarks returns the latest successful watermarks sample (nil before
// the first) and whether the latest poll failed since.
func (b *Board) HighWatermarks() (hwm map[int32]int64, stale bool) {
	return maps.Clone(b.hwm), b.hwmErr != nil
}

// HighWatermarksAt: when the watermarks HighWatermarks returns were asked
// for.
func (b *Board) HighWatermarksAt() time.Time { return b.hwmAt }

// RefreshedSince reports whether every view the report is built from was
// read again after t and covers the watermarks hwm: consumer-current's state
// (while it runs), consumer-query's usage (while it runs), and the audit,
// which must also have read each partition up to hwm. A caught-up moment
// alone is not enough for a report: the usage and the audit polled just
// before it may lag behind the consumers' last writes.
func (b *Board) RefreshedSince(t time.Time, hwm map[int32]int64) bool {
	if p := b.procs[Current]; p != nil && p.alive() && (!b.sensorsRead.at.After(t) || b.sensorsRead.err != nil) {
		return false
	}
	if p := b.procs[Query]; p != nil && p.alive() && (!b.usageRead.at.After(t) || b.usageRead.err != nil) {
		return false
	}
	if !b.truthRead.at.After(t) || b.truthRead.err != nil {
		return false
	}
	for part, h := range hwm {
		if h > 0 && b.auditThrough[part] < h {
			return false
		}
	}
	return true
}

// leaderCatchingUp: Kafka answers a log-end read with OFFSET_NOT_AVAILABLE
// ("Leader high watermark is not caught up") while a partition's new
// leader has not caught up its high watermark: for a poll or two after a
// leader change, and on Apache Kafka 4.1 for as long as the ISR is below
// min.insync.replicas. The leader and ISR changes are the events; the
// watermarks and lags are marked stale meanwhile, and no failure is
// announced.
func leaderCatchingUp(err error) bool {
	return strings.Contains(err.Error(), "Leader high watermark is not caught up")
}
