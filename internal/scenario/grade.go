package scenario

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The grade: whatever runs as consumer-usage (the built-in one, or the
// user's --usage-cmd) goes through a seeded schedule of faults, then the
// producer stops and the consumer is given time to commit the end of
// every partition; its effects are then exact, or over or under by so
// much, every message of the drift named.

const (
	// gradeKills is how many SIGKILLs the schedule has.
	gradeKills = 8
	// gradeFreeze is how long consumer-usage stays frozen while a second
	// instance runs: past a session timeout of up to 15 s (the examples
	// use 6 s), so the group gives its partitions away meanwhile.
	gradeFreeze = 20 * time.Second
	// gradeEnd bounds the wait for the end of every partition.
	gradeEnd = 90 * time.Second
)

// Grade is the grade's name: the picker offers it first to a lab that runs
// the user's consumer-usage.
const Grade = "grade"

var grade = Scenario{
	Name:    Grade,
	Title:   "Grade consumer-usage: crashes, a stop, a freeze, a broker restart, a scale-out, then the verdict",
	Summary: "seeded faults on consumer-usage (--usage-cmd: yours), then exact, or over/under, by message",
	Article: "The seed article ends on a question: what happens if the same message is processed twice? Here " +
		"consumer-usage answers it under the faults a real deployment meets, at moments drawn from the seed, and " +
		"the audit of the topic says what its effects add up to: exact to the cent, or over or under, and by which " +
		"messages.",
	Baseline: true,
	Steps: []Step{
		{
			Title: "Steady state",
			Say: "consumer-usage starts from a new baseline: its records cleared, its group new, reading on " +
				"from the end of the topic.",
			Watch: "Its row running; the usage panel counting from zero.",
			Until: stackReady, Stable: time.Second,
		},
		{
			Title: "The schedule",
			Say: "At moments drawn from the seed: 8 SIGKILLs each followed by a start, a SIGTERM and a start, a " +
				"second instance in the group while the first is frozen past its session timeout (its " +
				"partitions move, and it wakes up still holding its last batch), back to one instance, and a " +
				"restart of the broker when the lab runs it.",
			Watch: "The row crashing and starting; the events name each action; the usage panel's drift, if any, " +
				"grows.",
			Event: "scenario grade:",
			From:  gradeSchedule,
		},
		{
			Title: "The end of every partition",
			Say: "The producer stops. A consumer that commits what it has processed reaches the end of every " +
				"partition within seconds; the audit then compares its records with the topic, message by message.",
			Watch: "Its lag falls to 0; the usage panel's verdict per sensor.",
			Do:    "pause producer",
			Until: usageAtEnd, Stable: 3 * time.Second, Timeout: gradeEnd, EndsAnyway: true,
			Mark: "end",
		},
	},
	Checks:  []Check{graded},
	Cleanup: "resume producer",
	CleanupFrom: func(o Observation) string {
		var lines []string
		for _, name := range slices.Sorted(maps.Keys(o.Procs)) {
			if p := o.Procs[name]; board.IsUsage(name) && p.Alive && p.Frozen {
				lines = append(lines, "thaw "+name)
			}
		}
		return strings.Join(append(lines, "resume producer"), "\n")
	},
}

// gradeSchedule draws the schedule from the run's seed: the same seed,
// the same actions at the same moments.
func gradeSchedule(o Observation) (do, then string, err error) {
	seed := uint64(o.Seed)
	if o.Seed == 0 {
		seed = 1 // a time-based producer still gets one fixed schedule
	}
	rng := rand.New(rand.NewPCG(seed, 0x6772616465))
	between := func(lo, hi time.Duration) string {
		return (lo + time.Duration(rng.Int64N(int64(hi-lo)))).Round(100 * time.Millisecond).String()
	}
	var episodes [][]string
	for range gradeKills {
		episodes = append(episodes, []string{"crash " + board.Usage, "wait " + between(200*time.Millisecond, 2*time.Second), "start " + board.Usage})
	}
	episodes = append(episodes,
		[]string{"stop " + board.Usage, "wait 1s", "start " + board.Usage},
		[]string{"scale " + board.Usage + " 2", "wait 8s", "freeze " + board.Usage, "wait " + gradeFreeze.String(),
			"thaw " + board.Usage, "wait 5s", "scale " + board.Usage + " 1"})
	if b := gradeBroker(o); b != "" {
		episodes = append(episodes, []string{"restart " + b})
	}
	rng.Shuffle(len(episodes), func(i, j int) { episodes[i], episodes[j] = episodes[j], episodes[i] })
	var lines []string
	for _, e := range episodes {
		lines = append(lines, "wait "+between(time.Second, 5*time.Second))
		lines = append(lines, e...)
	}
	return strings.Join(append(lines, "wait 3s"), "\n"), "", nil
}

// gradeBroker is the broker the schedule restarts: the embedded one, or
// the first of a cluster's; "" when the lab does not run it (--brokers).
func gradeBroker(o Observation) string {
	if _, ok := o.Procs[board.Broker]; ok {
		return board.Broker
	}
	if _, ok := o.Procs[board.ClusterBroker(1)]; ok {
		return board.ClusterBroker(1)
	}
	return ""
}

var usageAtEnd = &Cond{
	What: "consumer-usage has committed the end of every partition",
	Holds: func(o Observation) bool {
		return o.UsageCaughtUp && o.usageInstances() == 1 && !o.Proc(board.Usage).Frozen
	},
}

var graded = Check{
	What:  "consumer-usage's effects are exact: every delta of the topic counted once, none twice, none lost",
	Needs: []string{"end"},
	Eval:  func(m Marks) (bool, string) { return gradeVerdict(m["end"]) },
}

// gradeVerdict judges the records as the usage panel compares them with
// the topic, once consumer-usage has committed the end of every partition.
func gradeVerdict(o Observation) (exact bool, observed string) {
	if stuck := stuckAt(o); stuck != "" {
		return false, "stuck at " + stuck + ": it never committed the end of the topic"
	}
	t := tallyRows(o.Usage.Rows)
	switch {
	case len(o.Usage.Rows) == 0:
		return false, "no usage to grade: consumer-usage wrote no record"
	case t.pending > 0:
		return false, fmt.Sprintf("not graded: the audit has not read as far as the records of %s", board.Plural(int64(t.pending), "sensor"))
	case t.unplaced > 0:
		return false, fmt.Sprintf("not graded: the records of %s name no message (no partition and offset)", board.Plural(int64(t.unplaced), "sensor"))
	}
	total := o.Usage.Total.Drift
	if t.exact == len(o.Usage.Rows) && total != nil && total.Verdict() == board.VerdictExact {
		return true, fmt.Sprintf("exact: %d/%d sensors, %s, not a cent of drift", t.exact, len(o.Usage.Rows), board.Plural(t.records, "record"))
	}
	var d board.Drift
	if total != nil {
		d = *total
	}
	var byKind []string
	n := 0
	for _, k := range slices.Sorted(maps.Keys(t.kinds)) {
		byKind = append(byKind, fmt.Sprintf("%d %s", t.kinds[k], k))
		n += t.kinds[k]
	}
	return false, fmt.Sprintf("%s by %+.2f h %+.2f km in %s (%s): %s", d.Verdict(), d.Hours(), d.Km(),
		board.Plural(int64(n), "message"), strings.Join(byKind, ", "), strings.Join(t.named, ", "))
}

// rowTally is what the usage rows of a grade add up to: how many are
// pending, unplaced or exact, their records, their causes by kind and the
// first three named.
type rowTally struct {
	pending, unplaced, exact int
	records                  int64
	kinds                    map[string]int
	named                    []string
}

func tallyRows(rows []board.UsageRow) rowTally {
	t := rowTally{kinds: map[string]int{}}
	for _, r := range rows {
		switch {
		case r.Verdict == board.VerdictPending:
			t.pending++
		case r.NoWindow && r.Recorded != nil && r.Recorded.Records > 0:
			t.unplaced++
		case r.Drift != nil && r.Drift.Verdict() == board.VerdictExact:
			t.exact++
		}
		if r.Recorded != nil {
			t.records += r.Recorded.Records
		}
		for _, c := range r.Causes {
			t.kinds[c.Kind]++
			if len(t.named) < 3 {
				t.named = append(t.named, fmt.Sprintf("%s p%d@%d %s", r.SensorID, c.Partition, c.Offset, c.Kind))
			}
		}
	}
	return t
}

// stuckAt names the partitions whose end consumer-usage did not commit
// ("p1@420 of 480"); "" when it committed every one.
func stuckAt(o Observation) string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(o.HWM)) {
		c, ok := o.Committed[p]
		switch {
		case !ok && o.HWM[p] > 0:
			out = append(out, fmt.Sprintf("p%d with no commit (end %d)", p, o.HWM[p]))
		case c < o.HWM[p]:
			out = append(out, fmt.Sprintf("p%d@%d of %d", p, c, o.HWM[p]))
		}
	}
	return strings.Join(out, ", ")
}
