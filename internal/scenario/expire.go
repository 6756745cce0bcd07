package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// expireWait bounds the wait for the broker to expire consumer-usage's
// commits: its session (6 s: a static member does not leave), the
// retention (at most expireRetention) and a check of the broker's.
const expireWait = expireRetention + 2*time.Minute

// expireRetention is the longest offsets retention the lesson waits out:
// Apache Kafka's shortest, one minute.
const expireRetention = time.Minute

// offsetsExpire: consumer-usage down longer than the offsets retention
// comes back to a group without commits.
var offsetsExpire = Scenario{
	Name:             "offsets-expire",
	Title:            "Committed offsets expire: latest skips, earliest counts twice",
	Summary:          "consumer-usage's commits expire: latest skips, earliest re-counts",
	UsageMode:        "naive",
	UsageReset:       "latest",
	Baseline:         true,
	OffsetsRetention: expireRetention,
	MaxReplay:        200_000,
	Article: "\"First start, or offsets expired by retention: auto.offset.reset=latest makes the consumer read only " +
		"future messages.\" A group's commits are not kept for ever: once the group has no member, the broker " +
		"deletes them after offsets.retention.minutes (7 days by default; this lab's broker was started with a " +
		"short one). A consumer down longer than that comes back as if it were new, and its reset decides.",
	Steps: []Step{
		{
			Title: "Steady state",
			Say: "consumer-usage runs as in the article: naive, fixed group, reset latest, auto-commit. The " +
				"dashboard pauses the producer a moment to measure the drift exactly.",
			Watch: "The drift of the total row; its lag at or near 0.",
			Until: stackReady, Stable: time.Second,
			Then: measure,
			Mark: "before",
		},
		{
			Title: "Stop consumer-usage",
			Say: "Publishing again. A clean stop: it commits what it processed. A static member does not leave " +
				"its group: the group empties when its session (6 s) runs out.",
			Watch: "stopped in its row; its lag grows.",
			Do:    "resume producer",
			Press: &Press{Action: action.Stop, Process: board.Usage},
			// Two polls of the committed offsets after the stop.
			Hold: 1500 * time.Millisecond,
			Mark: "stopped",
		},
		{
			Title: "Down past the retention",
			Say: "The group is empty; once the offsets retention has passed, the broker deletes its commits. " +
				"Nothing tells the consumer: the lab sees it in the committed offsets it reads.",
			Watch: "\"commits expired\" on the timeline; the lag has no commits to count from.",
			Event: "commits expired",
			Until: commitsExpired, Timeout: expireWait,
			Mark: "expired",
		},
		{
			Title: "Restart with latest",
			Say: "Same group, no commits: latest starts it at the end of the log. What was published while it " +
				"was down is never read. Then a pause to measure.",
			Watch: "\"skipped N messages\" on the timeline, with their offsets; the lag drops to 0 at once.",
			Event: "skipped",
			Press: &Press{Action: action.Restart, Process: board.Usage},
			Until: usageResumed, Stable: 500 * time.Millisecond,
			Then: measure,
			Mark: "skipped",
		},
		{
			Title: "The skipped messages, named",
			Say: "The audit finds the skipped messages in the topic and no usage record for them. The checkpoint " +
				"bridges the gap: the next delta spans the outage, booked on the day it was read.",
			Watch: "\"drift named: … never counted: commits expired while it was down\"; w lists them.",
			Event: board.ExpiredWhy,
			// Its condition holds as the step opens: the hold gives the
			// room time to read why the total stays exact.
			Hold:  6 * time.Second,
			Until: skippedNamed, Timeout: time.Minute,
			Mark: "named",
		},
		replayStep("Naive + earliest",
			"Reset earliest: a group without commits (expired, or new) reads from the first message. "+
				"Naive inserts every delta since the beginning a second time.",
			"rec climbs past exp: overcount on every sensor.",
			&Press{Action: action.Reset, Process: board.Usage, Value: "earliest"},
			"naive-earliest"),
		replayStep("Guarded + earliest",
			"Guarded replays the same topic from the first message: every effect is already in the store, "+
				"so the drift does not move. Earliest is safe only for idempotent processing.",
			"The drift stays where naive left it.",
			&Press{Action: action.Mode, Process: board.Usage, Value: "guarded"},
			"guarded-earliest"),
		{
			Title: "Publishing again",
			Say: "Expired commits are a first start: latest skips, earliest replays. Only an idempotent " +
				"consumer may replay; e goes back to latest.",
			Do: "resume producer",
		},
	},
	Checks: []Check{
		expiredAfterRetention("stopped", "expired"),
		skippedToTheEnd("expired", "skipped"),
		skippedMessagesNamed("named"),
		replayedFromBeginning("named", "naive-earliest"),
		overCounted("naive + earliest over-counts", "named", "naive-earliest"),
		driftUnchanged("guarded + earliest adds nothing: drift unchanged", "naive-earliest", "guarded-earliest"),
	},
	Cleanup: "resume producer",
}

// commitsExpired: consumer-usage is down and the board saw its group's
// commits gone.
var commitsExpired = &Cond{
	What: "consumer-usage's commits expired (its group empty longer than the offsets retention)",
	Holds: func(o Observation) bool {
		return o.Expired != nil && !o.Proc(board.Usage).Alive
	},
}

// skippedNamed: the skip is known, and every sensor's drift is named
// message by message with the skipped messages among them.
var skippedNamed = &Cond{
	What: "the skipped messages named as never counted",
	Holds: func(o Observation) bool {
		return causesNamed.Holds(o) && namedExpired(o) > 0
	},
}

// namedExpired counts the never-recorded messages the drift names inside
// the ranges consumer-usage skipped after its commits expired.
func namedExpired(o Observation) int {
	if o.Expired == nil {
		return 0
	}
	n := 0
	for _, r := range o.Usage.Rows {
		for _, c := range r.Causes {
			if c.Kind == board.CauseNeverRecorded && inSkipped(o.Expired.Skipped, c.Partition, c.Offset) {
				n++
			}
		}
	}
	return n
}

func inSkipped(rs []board.SkippedRange, partition int32, offset int64) bool {
	for _, r := range rs {
		if r.Partition == partition && offset >= r.From && offset < r.To {
			return true
		}
	}
	return false
}

// expiredAfterRetention: the commits seen gone are those of the stop, and
// not before the retention had passed since it.
func expiredAfterRetention(stopped, expired string) Check {
	return between("the broker deleted the group's commits once it had been empty for the offsets retention", stopped, expired,
		func(s, e Observation) (bool, string) {
			x := e.Expired
			if x == nil {
				return false, "no expiry seen"
			}
			var sum int64
			for _, o := range x.Offsets {
				sum += o
			}
			stop := s.Proc(board.Usage).LastExit
			after := time.Duration(0)
			if stop != nil {
				after = x.At.Sub(stop.At)
			}
			obs := fmt.Sprintf("commits at Σ%d (Σ%d at the stop) gone %.1f s after the stop (retention %s, session 6 s)",
				sum, s.CommittedSum(), after.Seconds(), minutes(e.OffsetsRetention))
			return stop != nil && sum == s.CommittedSum() && after >= e.OffsetsRetention, obs
		})
}

// skippedToTheEnd: restarted in the same group without commits, it began
// at the end: past the expired commits by the messages it skipped.
func skippedToTheEnd(expired, skipped string) Check {
	return between("latest started it at the end: what was published while it was down is skipped", expired, skipped,
		func(e, s Observation) (bool, string) {
			u := s.Proc(board.Usage)
			from, known := u.ReadFrom()
			x := s.Expired
			if x == nil || x.Skipped == nil {
				return false, "no start after the expiry seen"
			}
			var n int64
			var parts []string
			for _, r := range x.Skipped {
				n += r.Messages()
				parts = append(parts, fmt.Sprintf("p%d %d–%d", r.Partition, r.From, r.To-1))
			}
			obs := fmt.Sprintf("group %s started at Σ%s, the log end at the expiry was Σ%d: %s skipped (%s)",
				orDash(u.GroupID), orUnknown(from, known), e.HWMSum(), board.Plural(n, "message"), orDash(strings.Join(parts, ", ")))
			return known && n > 0 && from >= e.HWMSum() && u.GroupID == x.Group, obs
		})
}

// skippedMessagesNamed: the drift names skipped messages as never counted
// because the commits expired, and none outside what was skipped.
func skippedMessagesNamed(mark string) Check {
	return Check{
		What:  "the skipped messages are named: " + board.ExpiredWhy,
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			named := namedExpired(o)
			var skipped int64
			if o.Expired != nil {
				for _, r := range o.Expired.Skipped {
					skipped += r.Messages()
				}
			}
			obs := fmt.Sprintf("%s named of %s skipped (a skipped message with no usage of its own yields no delta)",
				board.Plural(int64(named), "message"), board.Count(skipped))
			return named > 0 && int64(named) <= skipped, obs
		},
	}
}
