package board

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// Commits that expire. A broker deletes a group's committed offsets once
// the group has been empty for its offsets retention (--offsets-retention;
// the rule is in kafkacfg/offsets.go): consumer-usage, stopped that long,
// comes back to a group with no commits, and auto.offset.reset decides
// where it starts. The board sees it from the committed offsets the lab
// polls: its group had commits, no instance runs, and the broker now has
// none. The next start in the same group says where it began; with latest,
// everything between the expired commits and that start is skipped, and
// the drift's never-recorded messages there are named for it.

// ExpiredCommits is a group's commits that the broker deleted while
// consumer-usage was down.
type ExpiredCommits struct {
	Group string
	// Offsets: the last commits seen before they were gone, per partition.
	Offsets map[int32]int64
	// At: the first read that found them gone.
	At time.Time
	// Skipped: per partition, what the next start in the group jumped over
	// (nil until it started; empty when it skipped nothing).
	Skipped []SkippedRange
}

// SkippedRange is offsets From to To−1 of Partition, never read by the
// consumer-usage that started at To.
type SkippedRange struct {
	Partition int32
	From, To  int64
}

// Messages is how many messages the range holds.
func (r SkippedRange) Messages() int64 { return r.To - r.From }

// expiry is what the board keeps of expired commits: the commits last
// seen per group (lastCommits), and the latest expiry with its skips.
type expiry struct {
	lastGroup   string
	lastCommits map[int32]int64
	latest      *ExpiredCommits
	// all: every expiry with its skips, oldest first: a drift names the
	// messages of each.
	all []*ExpiredCommits
	// resets: the offsets a consumer-usage's client moved its position
	// past (an offset reset), never delivered to it.
	resets []SkippedRange
}

// noteReset takes a consumer-usage's report that its client moved its
// position past offsets it never delivered: an offset reset
// (OFFSET_OUT_OF_RANGE, auto.offset.reset), e.g. a committed offset that
// retention deleted from under it.
func (b *Board) noteReset(at time.Time, name string, e status.Event) {
	if e.Count <= 0 {
		return
	}
	r := SkippedRange{Partition: e.Partition, From: e.Offset, To: e.Offset + e.Count}
	b.expiry.resets = append(b.expiry.resets, r)
	why := "its client moved its position past them (an offset reset)"
	if start, ok := b.ret.logStart[r.Partition]; ok && start > r.From {
		why = fmt.Sprintf("its position %d was before the log start %d (OFFSET_OUT_OF_RANGE), auto.offset.reset moved it on", r.From, start)
	}
	b.event(at, name, LevelWarn, fmt.Sprintf("skipped %s of p%d (offsets %d–%d), never counted: %s",
		Plural(r.Messages(), "message"), r.Partition, r.From, r.To-1, why))
}

// ExpiredCommits returns the latest expiry of consumer-usage's commits in
// this run (ok false when none).
func (b *Board) ExpiredCommits() (ExpiredCommits, bool) {
	if b.expiry.latest == nil {
		return ExpiredCommits{}, false
	}
	e := *b.expiry.latest
	e.Offsets = maps.Clone(e.Offsets)
	e.Skipped = slices.Clone(e.Skipped)
	return e, true
}

// noteCommits looks at a successful read of group's committed offsets for
// commits that were there and are gone while no consumer-usage runs.
func (b *Board) noteCommits(at time.Time, group string, offsets map[int32]int64) {
	had := committedOnly(b.expiry.lastCommits)
	have := committedOnly(offsets)
	sameGroup := group != "" && group == b.expiry.lastGroup
	if len(have) > 0 || !sameGroup {
		b.expiry.lastGroup = group
		if len(have) > 0 {
			b.expiry.lastCommits = have
		} else {
			b.expiry.lastCommits = nil
		}
		return
	}
	if len(had) == 0 || b.usageRunning() {
		return
	}
	e := &ExpiredCommits{Group: group, Offsets: had, At: at}
	b.expiry.latest = e
	b.expiry.all = append(b.expiry.all, e)
	b.expiry.lastCommits = nil
	b.event(at, Usage, LevelWarn, b.expiredWords(e))
}

// expiredWords follows the process's name on the timeline, short enough
// for the narration's watch line at 120 columns: "consumer-usage commits
// expired: its group was empty longer than the offsets retention (5s)".
func (b *Board) expiredWords(e *ExpiredCommits) string {
	retention := "the broker's offsets retention"
	if d := b.cfg.OffsetsRetention; d > 0 {
		written := d.String()
		if d%time.Minute == 0 {
			written = fmt.Sprintf("%dm", d/time.Minute) // as Kafka counts it: "1m", not "1m0s"
		}
		retention = fmt.Sprintf("the offsets retention (%s)", written)
	}
	return "commits expired: its group was empty longer than " + retention
}

// usageRunning: a consumer-usage instance runs (its group is not empty).
func (b *Board) usageRunning() bool {
	for _, n := range b.UsageInstances() {
		if p := b.procs[n]; p != nil && p.alive() {
			return true
		}
	}
	return false
}

// committedOnly is offsets without the partitions that have no commit.
func committedOnly(offsets map[int32]int64) map[int32]int64 {
	out := map[int32]int64{}
	for p, o := range offsets {
		if o >= 0 {
			out[p] = o
		}
	}
	return out
}

// noteStartAfterExpiry takes where an instance of group started reading
// (start, per partition) after its commits expired: what it jumped over is
// skipped, and the timeline says so once.
func (b *Board) noteStartAfterExpiry(at time.Time, name, group string, start map[int32]int64) {
	e := b.expiry.latest
	if e == nil || e.Skipped != nil || group != e.Group || len(start) == 0 {
		return
	}
	e.Skipped = []SkippedRange{}
	var parts []string
	var total int64
	for _, p := range slices.Sorted(maps.Keys(start)) {
		from, ok := e.Offsets[p]
		if !ok || start[p] <= from {
			continue
		}
		r := SkippedRange{Partition: p, From: from, To: start[p]}
		e.Skipped = append(e.Skipped, r)
		total += r.Messages()
		parts = append(parts, fmt.Sprintf("p%d %d–%d", p, r.From, r.To-1))
	}
	if total == 0 {
		b.event(at, name, LevelInfo, "started without commits (they expired) and skipped nothing")
		return
	}
	// The count first: the watch line may cut the offsets.
	b.event(at, name, LevelWarn, fmt.Sprintf("skipped %s, never counted: no commits (expired), latest started it at the end: %s",
		Plural(total, "message"), strings.Join(parts, ", ")))
}

// skipWhy is why consumer-usage never read the message at
// partition/offset, when it jumped over it: ExpiredWhy (a start whose
// commits had expired), ResetWhy (an offset reset), else "".
func (b *Board) skipWhy(partition int32, offset int64) string {
	in := func(r SkippedRange) bool { return r.Partition == partition && offset >= r.From && offset < r.To }
	for _, e := range b.expiry.all {
		if slices.ContainsFunc(e.Skipped, in) {
			return ExpiredWhy
		}
	}
	if slices.ContainsFunc(b.expiry.resets, in) {
		return ResetWhy
	}
	return ""
}
