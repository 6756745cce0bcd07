package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// costSteps are the histories the rebuild-cost lesson measures at: each
// ten times the last.
var costSteps = []int64{10_000, 100_000, 1_000_000}

// costStrategies are the strategies it measures, in order.
var costStrategies = []lesson.Rebuild{lesson.Replay, lesson.Snapshot, lesson.Changelog}

// Its claims, at the largest history: the remedies read under this share
// of the records, and take under this share of the replay's time (or
// costFloor, whichever is larger: a start of a process has a cost of
// its own).
const (
	costReadShare = 0.05
	costTimeShare = 0.2
	costFloor     = 300 * time.Millisecond
)

// rebuildCost measures the seed's remedies against the replay as the
// history grows.
var rebuildCost = Scenario{
	Name:    "rebuild-cost",
	Title:   "The price of a replay, and the seed's two remedies",
	Summary: "time consumer-current's replay, snapshot and changelog rebuilds at 10k, 100k, 1M messages",
	Article: "Strategy 1's trade-off is startup time: every restart reads the whole topic again. \"With millions of messages " +
		"the situation changes: Kafka's log compaction, which deletes obsolete messages keeping only the last one per key, " +
		"would reduce the volume to re-read significantly. Alternatively, periodic snapshots of the state on disk would let " +
		"it restart from an intermediate point.\" consumer-current can do both: a snapshot file, or a compacted changelog " +
		"topic of its own. The source topic itself is never compacted: consumer-usage and the audit need its history.",
	Panel:   PanelCost,
	Steps:   costLessonSteps(),
	Checks:  costChecks(),
	Cleanup: "resume producer",
}

func costLessonSteps() []Step {
	var steps []Step
	for i, n := range costSteps {
		steps = append(steps, Step{
			Title: "History: " + board.Count(n) + " messages",
			Say: fmt.Sprintf("The producer publishes back-dated history until the topic holds %s messages, then pauses, so "+
				"every strategy faces the same topic. consumer-usage does not count the history: it stops, and starts "+
				"again from the end of the topic on a new baseline.", board.Count(n)),
			Watch: "The producer's sent count jumps; the chart gets a new column of points as each strategy is measured.",
			Event: "history:",
			Do:    "resume producer\nhistory " + fmt.Sprint(n) + "\npause producer",
			Until: topicStill, Stable: time.Second,
		})
		for _, s := range costStrategies {
			steps = append(steps, costMeasure(s, n, i == 0))
		}
	}
	return append(steps, Step{
		Title: "The cost, drawn",
		Say: "A replay reads every message, so its time grows with the history: at a billion messages it would be an hour. " +
			"A snapshot or a changelog reads the state and only what follows it: its time stays that of a start. The " +
			"changelog is a topic of its own, compacted to about one record per sensor; compacting the source topic " +
			"instead would take from consumer-usage and the audit the history they read.",
		Watch: "The chart: replay's ● climbs with the history, ■ snapshot and ▲ changelog stay flat; the figures beside it.",
		Do:    "resume producer",
	})
}

// costMeasure is one measurement: strategy s at history n.
func costMeasure(s lesson.Rebuild, n int64, first bool) Step {
	say := map[lesson.Rebuild]string{
		lesson.Replay: "Replay, the seed's strategy: a fresh group, earliest, every message read again.",
		lesson.Snapshot: "Snapshot: consumer-current writes its state and the offsets it covers to a file (atomically: a " +
			"crash mid-write leaves the previous one whole), at least every 5 s; a start loads it and reads only what follows.",
		lesson.Changelog: "Changelog: consumer-current publishes each sensor's latest state, with the offsets it reflects, " +
			"to a compacted topic of its own; a start reads it back, then only what follows in the topic.",
	}[s]
	if !first {
		say = fmt.Sprintf("%s%s at %s messages.", strings.ToUpper(string(s)[:1]), string(s)[1:], board.Count(n))
	}
	return Step{
		Title: fmt.Sprintf("%s at %s", s, board.Count(n)),
		Say:   say + " The dashboard switches the strategy (the running process prepares it), crashes consumer-current and starts it.",
		Watch: "consumer-current's row and the timeline: \"caught up: … N messages, T ms\"; the chart's new point.",
		Event: "caught up",
		Do:    fmt.Sprintf("rebuild %s\ncrash %s\nstart %s", s, board.Current, board.Current),
		Until: rebuiltWith(s), Stable: time.Second,
		Tell: costTell,
		Mark: costMark(s, n),
	}
}

func costMark(s lesson.Rebuild, n int64) string { return fmt.Sprintf("%s@%d", s, n) }

// topicStill: the producer is paused, consumer-current caught up and
// equal to the audit, which read the whole topic: every strategy then
// faces the same history. (consumer-usage, in a new group on a paused
// topic, has no commits to be caught up with: it is not waited for.)
var topicStill = &Cond{
	What: "producer paused, consumer-current caught up and equal to the audit, which read the whole topic",
	Holds: func(o Observation) bool {
		prod, c := o.Proc(board.Producer), o.Proc(board.Current)
		return prod.Alive && prod.Producer.Paused && c.Alive && c.Current.CaughtUp && o.Sensors.Status == board.Live &&
			allMatchTruth(o) && o.Usage.AuditCount == o.HWMSum()
	},
}

// rebuiltWith: consumer-current's incarnation rebuilt with strategy s,
// caught up, and equals the audit's last message of every sensor.
func rebuiltWith(s lesson.Rebuild) *Cond {
	return &Cond{
		What: fmt.Sprintf("consumer-current rebuilt by %s, caught up, equal to the topic", s),
		Holds: func(o Observation) bool {
			c := o.Proc(board.Current)
			r := c.Current.LastRebuild
			return c.Alive && c.Current.CaughtUp && r != nil && r.Done && r.Strategy == string(s) &&
				o.Sensors.Status == board.Live && allMatchTruth(o)
		},
	}
}

func costTell(o Observation) string {
	c := o.Proc(board.Current)
	if c.Current.LastRebuild == nil {
		return "no rebuild reported"
	}
	r := *c.Current.LastRebuild
	return fmt.Sprintf("%s: %s of the %s records of the topic read (%.2f%%)", r.Text(o.At.Location()),
		board.Count(r.RecordsRead()), board.Count(r.History), 100*float64(r.RecordsRead())/float64(max(r.History, 1)))
}

func costChecks() []Check {
	largest := costSteps[len(costSteps)-1]
	var all []string
	for _, n := range costSteps {
		for _, s := range costStrategies {
			all = append(all, costMark(s, n))
		}
	}
	return []Check{
		{
			What:  "every rebuild, by every strategy, equals the topic's last valid message of every sensor",
			Needs: all,
			Eval:  func(m Marks) (bool, string) { return everyRebuildExact(m, all) },
		},
		remedyReads(lesson.Snapshot, largest),
		remedyReads(lesson.Changelog, largest),
		remedyTime(lesson.Snapshot, largest),
		remedyTime(lesson.Changelog, largest),
		{
			What:  "a replay's time grows with the history",
			Needs: []string{costMark(lesson.Replay, costSteps[0]), costMark(lesson.Replay, largest)},
			Eval: func(m Marks) (bool, string) {
				small, big := rebuildOf(m[costMark(lesson.Replay, costSteps[0])]), rebuildOf(m[costMark(lesson.Replay, largest)])
				return big.Millis > small.Millis && big.RecordsRead() >= big.History,
					fmt.Sprintf("%s at %s, %s at %s", board.Millis(small.Millis), board.Count(small.History),
						board.Millis(big.Millis), board.Count(big.History))
			},
		},
	}
}

func rebuildOf(o Observation) board.RebuildRun {
	if r := o.Proc(board.Current).Current.LastRebuild; r != nil {
		return *r
	}
	return board.RebuildRun{}
}

func everyRebuildExact(m Marks, marks []string) (bool, string) {
	var off []string
	for _, name := range marks {
		o := m[name]
		r := rebuildOf(o)
		switch {
		case r.FellBack != "":
			off = append(off, fmt.Sprintf("%s fell back (%s)", name, r.FellBack))
		case !allMatchTruth(o):
			off = append(off, name+" differs from the audit")
		}
	}
	if len(off) > 0 {
		return false, strings.Join(first(off, 3), "; ")
	}
	return true, fmt.Sprintf("%d rebuilds, each sensor's state the audit's last valid message", len(marks))
}

// remedyReads: strategy s read under costReadShare of the records at
// history n.
func remedyReads(s lesson.Rebuild, n int64) Check {
	mark := costMark(s, n)
	return Check{
		What:  fmt.Sprintf("%s at %s messages reads under %.0f%% of them", s, board.Count(n), costReadShare*100),
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			r := rebuildOf(m[mark])
			share := float64(r.RecordsRead()) / float64(max(r.History, 1))
			return r.History > 0 && share < costReadShare,
				fmt.Sprintf("read %s of %s (%.2f%%)", board.Count(r.RecordsRead()), board.Count(r.History), share*100)
		},
	}
}

// remedyTime: strategy s took under costTimeShare of the replay's time at
// history n, or under costFloor.
func remedyTime(s lesson.Rebuild, n int64) Check {
	mark, replay := costMark(s, n), costMark(lesson.Replay, n)
	return Check{
		What: fmt.Sprintf("%s at %s messages takes under a fifth of the replay's time (or %s)",
			s, board.Count(n), board.Millis(costFloor.Milliseconds())),
		Needs: []string{mark, replay},
		Eval: func(m Marks) (bool, string) {
			r, rp := rebuildOf(m[mark]), rebuildOf(m[replay])
			bound := max(int64(float64(rp.Millis)*costTimeShare), costFloor.Milliseconds())
			return r.Done && r.Millis < bound,
				fmt.Sprintf("%s against the replay's %s (bound %s)", board.Millis(r.Millis), board.Millis(rp.Millis), board.Millis(bound))
		},
	}
}
