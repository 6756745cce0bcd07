package scenario

import (
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The partitions lesson (seed 002): hash(key) % partitions keeps a key in
// one partition, and so its order, only while the partition count stays
// constant. The topic grows from 3 to 4 partitions under a backlog: most
// sensors' keys hash elsewhere, their newer readings sit in a partition a
// consumer may finish before the one that holds their older ones, and a
// consumer that reads them so takes its deltas from the wrong reading.
// Each claim is checked on the audit's read of the topic.

// grownTo is the partition count the lesson grows the topic to.
const grownTo = 4

// lessonBacklog is the burst of history published while consumer-usage is
// stopped: 400 messages per sensor, spread over the three partitions (p0
// takes a tenth, p2 half), in fetches of at most kafkacfg.UsageFetchBytes
// (about 350 messages): p0 is done fetches before the others. It is small
// enough for naive to catch up within a minute on a loaded machine.
const lessonBacklog = 4000

// threePartitions: the stack is ready on a topic of 3 partitions whose
// keys are all where they hash (none moved).
var threePartitions = &Cond{
	What: "every process running and caught up on a topic of 3 partitions, every key in its partition",
	Holds: func(o Observation) bool {
		k := o.Parts.Keys
		return stackReady.Holds(o) && o.Parts.Fresh() && len(o.Parts.Rows) == 3 &&
			k.Seen && len(k.Moved) == 0 && len(k.Scattered) == 0 && len(o.HWM) == 3
	},
}

// everyKeyMoved: the topic has grownTo partitions and the audit found each
// sensor the partitioner sends elsewhere in its new partition.
var everyKeyMoved = &Cond{
	What: fmt.Sprintf("%d partitions, and every moved key's records in its new partition", grownTo),
	Holds: func(o Observation) bool {
		g := o.Parts.Growth
		if !o.Parts.Fresh() || len(o.Parts.Rows) != grownTo || g == nil || len(g.Planned) == 0 {
			return false
		}
		return len(o.Parts.Keys.Moved) == len(g.Planned) && len(o.Parts.Keys.Moving) == 0
	},
}

// backlogWaits: consumer-usage is stopped with the burst behind its
// group's committed offsets, as the watermarks show it.
var backlogWaits = &Cond{
	What: fmt.Sprintf("consumer-usage stopped, %s messages or more past its group's commits", board.Count(lessonBacklog)),
	Holds: func(o Observation) bool {
		return !o.Proc(board.Usage).Alive && !o.HWMStale && o.HWMSum()-o.CommittedSum() >= lessonBacklog
	},
}

// causesNamed: the usage is compared on every line, and every drift is
// named message by message (its causes read from the store add up to it).
var causesNamed = &Cond{
	What: "every usage line compared, every drift named message by message",
	Holds: func(o Observation) bool {
		if len(o.Usage.Rows) == 0 {
			return false
		}
		for _, r := range o.Usage.Rows {
			if r.Drift == nil || r.CausesErr != nil {
				return false
			}
			var h, k int64
			for _, c := range r.Causes {
				d := c.Drift()
				h, k = h+d.HoursCents, k+d.KmCents
			}
			if h != r.Drift.HoursCents || k != r.Drift.KmCents {
				return false
			}
		}
		return true
	},
}

var partitionsAdded = Scenario{
	Name:       "partitions-added",
	Title:      "More partitions: keys move, and their order is lost",
	Summary:    "3 → 4 partitions under a backlog: moved keys read out of order, usage over-counted",
	UsageMode:  "naive",
	UsageReset: "latest",
	Article: "A message goes to hash(key) % partitions: a key stays in one partition, and so in order, only " +
		"while the partition count stays constant. If partitions are added, the formula gives different " +
		"results and messages with the same key can end up in different partitions. Kafka orders each " +
		"partition, not the topic: a consumer reading two partitions may get a key's newer messages before " +
		"its older ones. And a topic cannot shrink.",
	Steps: []Step{
		{
			Title: "A fresh 3-partition topic",
			Say: "The lesson starts on a new sensor-data: the lab deletes it and creates it again with 3 " +
				"partitions (recreate-topic), so every key is where it hashes and the backlog is this lesson's " +
				"alone. consumer-usage starts on a new baseline.",
			Watch: "The partitions lines: p0 p1 p2, their sensors; hw starts again from 0.",
			Event: "recreated",
			Do:    "recreate-topic",
			Until: threePartitions, Stable: 2 * time.Second, Timeout: 2 * time.Minute,
			Tell: tellLayout,
			Mark: "fresh",
		},
		{
			Title: "Backlog: usage stopped",
			Say: fmt.Sprintf("consumer-usage stops; its group keeps its committed offsets. The producer "+
				"publishes a burst of %s readings (the fleet's next) on top of its live ones: they wait in "+
				"p0, p1 and p2 for consumer-usage. consumer-current keeps reading.", board.Count(lessonBacklog)),
			Watch: "consumer-usage stopped, its lag in the hundreds per partition (committed column).",
			Do:    fmt.Sprintf("stop %s\nbacklog %d", board.Usage, lessonBacklog),
			Until: backlogWaits, Stable: time.Second,
			Tell: tellBacklog,
			Mark: "backlog",
		},
		{
			Title: "Add a partition",
			Say: fmt.Sprintf("The topic grows to %d partitions while the producer publishes. Its partitioner, CRC-32 "+
				"of the key modulo the count, now sends most sensors elsewhere: their next readings go to "+
				"another partition than their backlog. The producer and the consumers learn of the new "+
				"partition at their next metadata refresh: every second here (librdkafka's default is 5 minutes).",
				grownTo),
			Watch: "The events: which keys move, then (the audit) from which offset; consumer-current assigned " +
				"the new partition; a fourth line in the partitions.",
			Event: "keys moved",
			Press: &Press{Action: action.AddPartitions, Value: strconv.Itoa(grownTo)},
			// Each moved sensor's new partition gets a few readings.
			Until: everyKeyMoved, Stable: 3 * time.Second, Timeout: time.Minute,
			Tell: tellMoves,
			Mark: "grown",
		},
		{
			Title: "consumer-current replays",
			Say: "The producer pauses so the topic stands still, and consumer-current restarts: a fresh group, " +
				"from earliest, the four partitions side by side. A partition with few records is done first: " +
				"a sensor that moved there has its newest readings read before the older ones still coming " +
				"from its old partition, and the last one read wins.",
			Watch: "Sensors panel: behind on moved sensors, same on the others; t lists where each moved.",
			Do:    "pause producer",
			Press: &Press{Action: action.Crash, Process: board.Current},
			Until: currentDown,
		},
		{
			Title: "Its state, read back",
			Say: "Every record is in the topic, in order in its partition; consumer-current holds, for some " +
				"moved sensors, a reading older than their latest.",
			Watch: "behind in the sensors panel: the audit read a later message of those sensors.",
			Press: &Press{Action: action.Restart, Process: board.Current},
			// The producer stays paused a moment: its next readings would
			// put the moved sensors right again.
			Hold:  5 * time.Second,
			Until: currentRebuilt, Stable: 1500 * time.Millisecond,
			Tell: tellBehind,
			Mark: "current",
		},
		{
			Title: "Naive catches up",
			Say: "Publishing again. consumer-usage restarts where its group committed: the backlog in p0–p2. " +
				"p3 has no committed offset, and reset latest starts it at its end: the readings there before " +
				"are skipped, and the checkpoint bridges them. A moved sensor whose new partition is done " +
				"first has its newer readings processed before its backlog: deltas from the wrong reading.",
			Watch: "The usage lines of the moved sensors: their drift grows as consumer-usage reads on.",
			Do:    "resume producer",
			Press: &Press{Action: action.Restart, Process: board.Usage},
			Until: usageResumed, Stable: 500 * time.Millisecond, Timeout: 3 * time.Minute,
			Then: measure,
		},
		{
			Title: "What naive made of it",
			Say: "Paused, every number compares exactly. The sensors that moved to a partition consumer-usage " +
				"was done with sooner are over-counted: at their first new reading it took the delta from " +
				"its last old checkpoint, then counted their backlog again, then took the next delta from " +
				"an old reading. The others are exact: their readings came in order.",
			Watch: "The usage panel: over-counted on moved sensors, exact on the others; w names each message " +
				"(stale-reading, never-recorded).",
			Hold:  5 * time.Second,
			Until: causesNamed, Timeout: 2 * time.Minute,
			Mark: "naive",
		},
		{
			Title: "Guarded, from earliest",
			Say: "Guarded applies each message's effect at most once. A new baseline and a replay of the " +
				"whole topic from earliest, through the move: every message recorded once, and still deltas " +
				"taken from a newer reading where a key's partitions were read out of order.",
			Watch: "The usage panel again: guarded over-counts the moved sensors too, without a message counted twice.",
			Do:    fmt.Sprintf("resume producer\nmode %s guarded\nreset-lab\nreset %s earliest", board.Usage, board.Usage),
			Until: usageResumed, Stable: 500 * time.Millisecond, Timeout: 3 * time.Minute,
			Then: measure,
		},
		{
			Title: "What guarded made of it",
			Say: "No message has two usage records: guarded's guarantee holds. The moved sensors are " +
				"over-counted all the same: each delta was written once, from the reading before it in " +
				"the order consumer-usage read, which was not the key's order.",
			Watch: "The usage panel: over-counted on moved sensors, no counted-again in w.",
			Hold:  5 * time.Second,
			Until: causesNamed, Timeout: 2 * time.Minute,
			Mark: "guarded",
		},
		{
			Title: "Back to three partitions",
			Say: "A topic cannot shrink: Kafka removes no partition. The lab deletes sensor-data and creates " +
				"it again with 3 (recreate-topic): one name that every process, the audit and the workshop " +
				"already know; a topic of its own for the lesson would have them all switch and back. " +
				"The price is the history, and a new baseline.",
			Watch: "Three partitions again, every key in its partition; consumer-usage back to latest.",
			Event: "recreated",
			Do:    "resume producer\nrecreate-topic",
			Until: threePartitions, Stable: 2 * time.Second, Timeout: 2 * time.Minute,
			Tell: tellLayout,
			Mark: "back",
		},
	},
	Checks: []Check{
		movedAsHashed("grown"),
		sawTheNewPartition("grown"),
		partitionOrderHeld("naive"),
		currentKeptAnOldReading("current"),
		usageOverCounted("naive: moved sensors over-counted, the others exact", "naive", false),
		usageOverCounted("guarded: moved sensors over-counted all the same", "guarded", true),
		backToThree("back"),
	},
	Cleanup: "resume producer\nstart " + board.Current + "\nstart " + board.Usage,
}

// hashed is the producer's partitioner, written here again from its
// definition (CRC-32 IEEE of the key modulo the partition count) so the
// check does not take the lab's word for it.
func hashed(key string, partitions int) int32 {
	return int32(crc32.ChecksumIEEE([]byte(key)) % uint32(partitions))
}

// sensorsOf lists every sensor the partitions place, in order.
func sensorsOf(o Observation) []string {
	var ids []string
	for _, r := range o.Parts.Rows {
		ids = append(ids, r.Sensors...)
	}
	slices.Sort(ids)
	return ids
}

// shortIDs is sensor ids without their "sensor-" prefix: "01 03 08".
func shortIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.TrimPrefix(id, "sensor-")
	}
	return strings.Join(out, " ")
}

// movedAsHashed: the audit found exactly the sensors whose CRC-32 modulo 4
// differs from modulo 3 moved, each from its modulo-3 partition to its
// modulo-4 one, its records there all after its last one in the old (the
// audit reports a move only then); every other key stayed.
func movedAsHashed(mark string) Check {
	return Check{
		What:  "moved: the sensors whose CRC-32 mod 4 ≠ mod 3, each from then on in its new partition",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			ids := sensorsOf(o)
			want := map[string][2]int32{}
			for _, id := range ids {
				if from, to := hashed(id, 3), hashed(id, grownTo); from != to {
					want[id] = [2]int32{from, to}
				}
			}
			got := map[string][2]int32{}
			for _, mv := range o.Parts.Keys.Moved {
				got[mv.Sensor] = [2]int32{mv.From, mv.To}
			}
			var wrong []string
			for id, w := range want {
				if g, ok := got[id]; !ok || g != w {
					wrong = append(wrong, fmt.Sprintf("%s should move p%d→p%d", id, w[0], w[1]))
				}
			}
			for id := range got {
				if _, ok := want[id]; !ok {
					wrong = append(wrong, id+" moved, its hash did not change")
				}
			}
			slices.Sort(wrong)
			obs := fmt.Sprintf("%d of %d: %s", len(got), len(ids), shortIDs(slices.Sorted(maps.Keys(got))))
			if s := o.Parts.Keys.Scattered; len(s) > 0 {
				wrong = append(wrong, "scattered: "+strings.Join(s, "; "))
			}
			if len(wrong) > 0 {
				obs += "; " + strings.Join(first(wrong, 4), "; ")
			}
			return len(ids) > 0 && len(want) > 0 && len(wrong) == 0, obs
		},
	}
}

func movesText(moves []board.KeyMove) string {
	parts := make([]string, len(moves))
	for i, mv := range moves {
		parts[i] = fmt.Sprintf("%s p%d→p%d from offset %d", strings.TrimPrefix(mv.Sensor, "sensor-"), mv.From, mv.To, mv.FirstOffset)
	}
	return strings.Join(parts, ", ")
}

// seenWithin bounds how long after the partitions were added the producer
// and a running consumer may take to use them: seconds, not librdkafka's
// 5-minute default refresh.
const seenWithin = 10 * time.Second

// sawTheNewPartition: the producer wrote to the new layout and the running
// consumer-current was assigned the new partition within seconds.
func sawTheNewPartition(mark string) Check {
	return Check{
		What:  "the new partition used within seconds",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			g := m[mark].Parts.Growth
			if g == nil {
				return false, "the board saw no partitions added"
			}
			prod, cur, audit := g.ProducerAt.Sub(g.At), g.Assigned[board.Current].Sub(g.At), g.AuditAt.Sub(g.At)
			obs := fmt.Sprintf("producer %s, consumer-current %s, audit %s",
				after(g.ProducerAt, prod), after(g.Assigned[board.Current], cur), after(g.AuditAt, audit))
			ok := !g.ProducerAt.IsZero() && !g.Assigned[board.Current].IsZero() && !g.AuditAt.IsZero() &&
				prod < seenWithin && cur < seenWithin && audit < seenWithin
			return ok, obs
		},
	}
}

func after(at time.Time, d time.Duration) string {
	if at.IsZero() {
		return "not seen"
	}
	return fmt.Sprintf("%.1f s", max(d, 0).Seconds())
}

// partitionOrderHeld: Kafka's guarantee held: within each partition every
// sensor's records are in order (the audit found none out of order).
func partitionOrderHeld(mark string) Check {
	return Check{
		What:  "what holds: each partition kept its keys' order",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			k := m[mark].Parts.Keys
			return k.Seen && k.Records > 0 && k.Disordered == 0, fmt.Sprintf("%s records, %d out of order in a partition",
				board.Count(k.Records), k.Disordered)
		},
	}
}

// movedSet is the sensors the audit found moved.
func movedSet(o Observation) map[string]board.KeyMove {
	out := map[string]board.KeyMove{}
	for _, mv := range o.Parts.Keys.Moved {
		out[mv.Sensor] = mv
	}
	return out
}

// currentKeptAnOldReading: with the producer paused and consumer-current
// caught up, some moved sensor's state is an older reading than the
// topic's latest, read from its old partition, while every sensor that did
// not move holds its latest.
func currentKeptAnOldReading(mark string) Check {
	return Check{
		What:  "consumer-current: moved sensors left on an older reading",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			moved := movedSet(o)
			var ids, wrong []string
			for _, r := range o.Sensors.Rows {
				mv, isMoved := moved[r.SensorID]
				t := o.Keys[r.SensorID]
				switch {
				case isMoved && r.Truth == board.TruthBehind && t.Last != nil && r.Partition == mv.From:
					ids = append(ids, r.SensorID)
				case r.Truth != board.TruthMatch && !isMoved:
					wrong = append(wrong, fmt.Sprintf("%s (not moved) %s", r.SensorID, r.Truth))
				case r.Truth != board.TruthMatch && isMoved:
					wrong = append(wrong, fmt.Sprintf("%s %s at p%d@%d", r.SensorID, r.Truth, r.Partition, r.Offset))
				}
			}
			prod := o.Proc(board.Producer)
			obs := fmt.Sprintf("%d of %d: %s; the others exact", len(ids), len(moved), shortIDs(ids))
			if len(wrong) > 0 {
				obs += "; " + strings.Join(first(wrong, 3), "; ")
			}
			return prod.Producer.Paused && o.Sensors.Status == board.Live && len(ids) > 0 && len(wrong) == 0, obs
		},
	}
}

// usageOverCounted: at a quiet mark, the sensors whose usage is over-counted
// are moved ones, at least one of them; their drift is named message by
// message as deltas from the wrong reading (and the readings skipped in
// their place); every sensor that did not move is exact. guarded: no
// message has more than one usage record.
func usageOverCounted(what, mark string, guarded bool) Check {
	return Check{
		What:  what,
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			over, wrong, again := staleOverCounts(o)
			obs := strings.Join(first(over, 4), ", ") + " (stale readings)"
			if guarded {
				obs = fmt.Sprintf("%d counted twice; %s", again, obs)
			}
			if len(wrong) > 0 {
				obs += "; " + strings.Join(first(wrong, 3), "; ")
			}
			ok := o.Proc(board.Producer).Producer.Paused && len(over) > 0 && len(wrong) == 0 && len(o.Usage.Rows) > 0
			if guarded {
				ok = ok && again == 0 && o.UsageMode == "guarded"
			}
			return ok, obs
		},
	}
}

// staleOverCounts sorts o's usage rows for usageOverCounted: over lists the
// moved sensors over-counted by stale readings, wrong every other row that
// is not as the lesson says, again the messages counted twice.
func staleOverCounts(o Observation) (over, wrong []string, again int) {
	moved := movedSet(o)
	for _, r := range o.Usage.Rows {
		_, isMoved := moved[r.SensorID]
		kinds := map[string]int{}
		for _, c := range r.Causes {
			kinds[c.Kind]++
		}
		again += kinds["counted-again"]
		switch {
		case r.Drift == nil:
			wrong = append(wrong, r.SensorID+" not compared")
		case !isMoved && r.Verdict != board.VerdictExact:
			wrong = append(wrong, fmt.Sprintf("%s (not moved) %s", r.SensorID, r.Verdict))
		case isMoved && r.Verdict == board.VerdictOver && kinds["stale-reading"] > 0:
			over = append(over, fmt.Sprintf("%s %+.2f h", strings.TrimPrefix(r.SensorID, "sensor-"), r.Drift.Hours()))
		case isMoved && r.Verdict != board.VerdictExact:
			wrong = append(wrong, fmt.Sprintf("%s %s", r.SensorID, r.Verdict))
		}
	}
	return over, wrong, again
}

// backToThree: the recreated topic has 3 partitions, every key in the one
// it hashes to, nothing moved.
func backToThree(mark string) Check {
	return Check{
		What:  "back to 3 partitions, every key in its partition",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			k := o.Parts.Keys
			return len(o.Parts.Rows) == 3 && k.Seen && k.Keys > 0 && len(k.Moved) == 0 && len(k.Scattered) == 0,
				fmt.Sprintf("%d partitions, %d sensors, %d moved", len(o.Parts.Rows), k.Keys, len(k.Moved))
		},
	}
}

func layout(o Observation) string {
	parts := make([]string, 0, len(o.Parts.Rows))
	for _, r := range o.Parts.Rows {
		short := make([]string, len(r.Sensors))
		for i, s := range r.Sensors {
			short[i] = strings.TrimPrefix(s, "sensor-")
		}
		parts = append(parts, fmt.Sprintf("p%d [%s]", r.Partition, strings.Join(short, " ")))
	}
	return strings.Join(parts, " ")
}

func tellLayout(o Observation) string {
	return fmt.Sprintf("%d partitions: %s", len(o.Parts.Rows), layout(o))
}

// tellBacklog: how far consumer-usage's group committed, against the log ends.
func tellBacklog(o Observation) string {
	var parts []string
	for p := int32(0); p < int32(len(o.HWM)); p++ {
		parts = append(parts, fmt.Sprintf("p%d %d of %d", p, max(o.Committed[p], 0), o.HWM[p]))
	}
	return "consumer-usage's group committed " + strings.Join(parts, ", ") + ": the backlog waits"
}

func tellMoves(o Observation) string {
	return fmt.Sprintf("%d partitions; moved (audit): %s", len(o.Parts.Rows), movesText(o.Parts.Keys.Moved))
}

// tellBehind names the sensors consumer-current holds an old reading of:
// where it read it, and the topic's latest.
func tellBehind(o Observation) string {
	moved := movedSet(o)
	var behind []string
	for _, r := range o.Sensors.Rows {
		t := o.Keys[r.SensorID]
		if _, ok := moved[r.SensorID]; ok && r.Truth == board.TruthBehind && t.Last != nil {
			behind = append(behind, fmt.Sprintf("%s p%d@%d, %.1f s before its latest p%d@%d", strings.TrimPrefix(r.SensorID, "sensor-"),
				r.Partition, r.Offset, float64(t.Last.Timestamp-r.Timestamp)/1000, t.Last.Partition, t.Last.Offset))
		}
	}
	return fmt.Sprintf("consumer-current holds an older reading of %d moved sensors: %s", len(behind), strings.Join(behind, "; "))
}
