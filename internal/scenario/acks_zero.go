package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/role"
)

// The acks=0 lesson (seed 002: "fire-and-forget, no confirmation of
// receipt"): with acks=0 the producer counts a record as sent once it is
// written to the broker's socket. Records the broker never read from it
// are lost when it dies, and nothing tells the producer. With acks=1 the
// same records wait for their answer and are sent again once the broker is
// back.
//
// The loss is staged, not waited for: a broker dying at a random moment
// while a producer writes ten records a second rarely has one on the wire
// (measured: 0 of 1,980 at the lab's rate). So the dashboard freezes the
// broker (SIGSTOP: it stops reading its sockets), lets the producer send
// two rounds into them, and kills it (SIGKILL): the kernel drops what the
// broker never read.

// ownBrokerFreeze bounds the wait for two rounds sent into the frozen
// broker's sockets (the producer sends every interval: 1 s by default).
const ownBrokerFreeze = 10 * time.Second

// shownFor keeps a step whose condition holds within a second on screen
// long enough for a presenter to say what happened.
const shownFor = 3 * time.Second

// ownBrokers are the brokers the dashboard runs, by process name: the
// embedded one, or those of --cluster N.
func ownBrokers(o Observation) []string {
	var out []string
	if _, ok := o.Procs[board.Broker]; ok {
		out = append(out, board.Broker)
	}
	for i := 1; i <= role.MaxClusterBrokers; i++ {
		if n := board.ClusterBroker(i); o.Procs[n].Name != "" {
			out = append(out, n)
		}
	}
	return out
}

// ledBy is the partitions broker leads: every partition for the embedded
// broker (it is the only one), else those its cluster node leads.
func ledBy(o Observation, broker string) []int32 {
	n, cluster := board.ClusterBrokerNumber(broker)
	var out []int32
	for _, r := range o.Parts.Rows {
		if !cluster || (!r.Leaderless && r.Leader == int32(n)) {
			out = append(out, r.Partition)
		}
	}
	return out
}

// errNoOwnBroker refuses the lesson on a broker the dashboard does not run.
var errNoOwnBroker = refusal{"acks-zero kills the broker: it needs one the dashboard runs (the embedded broker, " +
	"or --cluster N), not one given with --brokers. Nothing was changed"}

// targetBroker is the broker the lesson freezes and kills: the only one
// (embedded, or --cluster 1), or the leader of the busiest partition of the
// dashboard's cluster.
func targetBroker(o Observation) (string, error) {
	own := ownBrokers(o)
	switch {
	case len(own) == 0:
		return "", errNoOwnBroker
	case len(own) == 1:
		return own[0], nil
	}
	r, err := busiest(o)
	if err != nil {
		return "", err
	}
	return board.ClusterBroker(int(r.Leader)), nil
}

// freezeTarget freezes the target broker.
func freezeTarget(o Observation) (do, then string, err error) {
	b, err := targetBroker(o)
	if err != nil {
		return "", "", err
	}
	if !o.Proc(b).Alive {
		return "", "", fmt.Errorf("%s is not running", b)
	}
	return "freeze " + b, "", nil
}

// killFrozen kills the frozen broker.
func killFrozen(o Observation) (do, then string, err error) {
	b, _, _, ok := frozenBroker(o)
	if !ok {
		return "", "", fmt.Errorf("no broker of the dashboard is frozen")
	}
	return "crash " + b, "", nil
}

// brokerKilled: a broker of the dashboard is down, killed while it was
// frozen (no thaw since the freeze).
var brokerKilled = &Cond{
	What: "the frozen broker down",
	Holds: func(o Observation) bool {
		for _, n := range ownBrokers(o) {
			if p := o.Proc(n); !p.Alive && p.LastExit != nil {
				return true
			}
		}
		return false
	},
}

// startOwnDown starts the dashboard's brokers that are down.
func startOwnDown(o Observation) (do, then string, err error) {
	var d []string
	for _, n := range ownBrokers(o) {
		if !o.Proc(n).Alive {
			d = append(d, "start "+n)
		}
	}
	if len(d) == 0 {
		return "", "", fmt.Errorf("no broker of the dashboard is down")
	}
	return strings.Join(d, "\n"), "", nil
}

// frozenBroker is the dashboard's broker that is frozen, the partitions it
// leads and when it froze.
func frozenBroker(o Observation) (string, []int32, time.Time, bool) {
	for _, n := range ownBrokers(o) {
		if p := o.Proc(n); p.Alive && p.Frozen {
			parts := ledBy(o, n)
			return n, parts, p.FrozenAt, len(parts) > 0
		}
	}
	return "", nil, time.Time{}, false
}

// sentIntoFrozen: the broker is frozen and the producer logged, on every
// partition it leads, records of two rounds sent with acks=0 after the
// freeze (the first could have been on its way as the broker stopped).
var sentIntoFrozen = &Cond{
	What: "records sent with acks=0 in two rounds since the broker froze, on every partition it leads (logged by the producer)",
	Holds: func(o Observation) bool {
		_, parts, at, ok := frozenBroker(o)
		if !ok {
			return false
		}
		for _, p := range parts {
			if o.Acks.Latest[p].Acks != string(lesson.AcksNone) || !o.Acks.AckedInTwoRoundsSince(p, at) {
				return false
			}
		}
		return true
	},
}

// heldByFrozen: the broker is frozen, nothing of its partitions was
// acknowledged since, and the producer reports records waiting with none
// acknowledged for heldFor, after the freeze.
var heldByFrozen = &Cond{
	What: "the producer's writes waiting: none acknowledged since the broker froze",
	Holds: func(o Observation) bool {
		_, parts, at, ok := frozenBroker(o)
		if !ok {
			return false
		}
		for _, p := range parts {
			if o.Acks.AckedSince(p, at) {
				return false
			}
		}
		a := o.Acks
		return a.WaitingAt.After(at) && a.Waiting > 0 && a.WaitingFor >= heldFor
	},
}

// brokerBack: every broker of the dashboard runs again, the topic's
// watermarks were read since the last of them started, and the producer
// logged a record of every partition since then (with acks=0, what
// settles the records before it: found, or lost), none held.
var brokerBack = &Cond{
	What: "the broker running again, the topic read since it started, a record of every partition sent since",
	Holds: func(o Observation) bool {
		var started time.Time
		for _, n := range ownBrokers(o) {
			p := o.Proc(n)
			if !p.Alive || p.Frozen {
				return false
			}
			started = maxTime(started, p.StartedAt)
		}
		if started.IsZero() || o.HWMStale || !o.HWMAt.After(started) || !producerAcked.Holds(o) || len(o.Parts.Rows) == 0 {
			return false
		}
		for _, r := range o.Parts.Rows {
			if !o.Acks.AckedSince(r.Partition, started) {
				return false
			}
		}
		return true
	},
}

// tellFrozenFor names the frozen broker, how long it has been frozen and
// what the producer holds unacknowledged.
func tellFrozenFor(o Observation) string {
	b, _, at, ok := frozenBroker(o)
	if !ok {
		return "no broker of the dashboard is frozen"
	}
	if o.Acks.Running == string(lesson.AcksNone) {
		return fmt.Sprintf("%s frozen %.1f s; with acks=0 the producer counted every record since as sent", b, o.At.Sub(at).Seconds())
	}
	return fmt.Sprintf("%s frozen %.1f s; the producer holds %s unacknowledged (acks=%s)",
		b, o.At.Sub(at).Seconds(), board.Plural(o.Acks.Waiting, "record"), orDash(o.Acks.Running))
}

// tellLostWith names the records sent with acks the topic does not hold.
func tellLostWith(acks lesson.Acks) func(Observation) string {
	return func(o Observation) string {
		lost := lostWith(o, string(acks))
		if len(lost) == 0 {
			return fmt.Sprintf("no record sent with acks=%s lost, of %s logged", acks, board.Count(o.Acks.Acknowledged))
		}
		return fmt.Sprintf("%s sent with acks=%s lost: %s", board.Plural(int64(len(lost)), "record"), acks, lostNamed(lost))
	}
}

// lostNamed says where lost records were: offsets for those the broker
// placed, else a count per partition and the first few by sensor and
// timestamp (what the topic was searched for).
func lostNamed(lost []board.LostWrite) string {
	var unplaced []board.LostWrite
	for _, w := range lost {
		if !w.Placed() {
			unplaced = append(unplaced, w)
		}
	}
	if len(unplaced) < len(lost) {
		return board.LostRanges(lost)
	}
	slices.SortFunc(unplaced, func(a, b board.LostWrite) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	var first []string
	for _, w := range unplaced[:min(3, len(unplaced))] {
		first = append(first, fmt.Sprintf("%s %s", w.Sensor, time.UnixMilli(w.Timestamp).Local().Format("15:04:05.000")))
	}
	more := ""
	if len(unplaced) > 3 {
		more = ", …"
	}
	return fmt.Sprintf("%s; first %s%s", board.UnplacedCounts(unplaced), strings.Join(first, ", "), more)
}

// sentButLost: between the marks, records the producer counted as sent
// with acks=0 are not in the topic, and the audit settled every one.
func sentButLost(start, after string) Check {
	return between("acks=0: records the producer counted as sent are not in the topic", start, after, func(s, a Observation) (bool, string) {
		lost := newlyLost(s, a, lesson.AcksNone)
		obs := fmt.Sprintf("%s of %s sent with acks=0 not in the topic (audit read Σ%d records, %d not settled yet)",
			board.Count(int64(len(lost))), board.Count(a.Acks.Unconfirmed-s.Acks.Unconfirmed), a.Usage.AuditCount, a.Acks.Pending)
		if len(lost) > 0 {
			obs += ": " + lostNamed(lost)
		}
		return len(lost) > 0 && a.Acks.Pending == 0, obs
	})
}

// newlyLost is what a shows lost with acks that s did not (a run
// directory that saw the lesson before lists those too).
func newlyLost(s, a Observation, acks lesson.Acks) []board.LostWrite {
	before := map[board.LostWrite]bool{}
	for _, w := range s.Acks.Missing {
		before[w] = true
	}
	var out []board.LostWrite
	for _, w := range lostWith(a, string(acks)) {
		if !before[w] {
			out = append(out, w)
		}
	}
	return out
}

var acksZero = Scenario{
	Name:       "acks-zero",
	Title:      "One broker: acks=0 loses what the broker never read, acks=1 does not",
	Summary:    "kill the frozen broker: acks=0 loses the records in its socket, counted as sent; acks=1 none",
	OwnBroker:  true,
	UsageMode:  "guarded",
	UsageReset: "latest",
	Article: "With acks=0 the producer does not wait for the broker at all: fire-and-forget, no confirmation " +
		"of receipt. A record counts as sent once it is written to the socket. If the broker dies before " +
		"it reads it, the record is gone and the producer never hears of it. With acks=1 the broker " +
		"answers once it has written the record; a record without an answer is sent again.",
	Steps: []Step{
		{
			Title: "Publishing with acks=all",
			Say: "The producer writes with acks=all. The dashboard will freeze the broker and kill it, twice: " +
				"once with acks=0, once with acks=1.",
			Watch: "The producer's row: publ. and its acks.",
			Until: stackReady, Stable: time.Second,
			Mark: "start",
		},
		switchAcks(lesson.AcksNone, "Switch to acks=0",
			"acks=0: the producer sends and forgets. The broker answers nothing, so librdkafka reports a "+
				"record delivered once it is written to the socket, with no offset. The producer flushes "+
				"and starts again with it.", ""),
		{
			Title: "Freeze the broker",
			Say: "The dashboard freezes the broker (SIGSTOP): it stops reading its sockets. The producer goes " +
				"on sending: its records wait in the broker's socket, and the producer counts them as sent.",
			Watch: "The broker's row frozen; the producer's sent count still grows.",
			Event: "frozen",
			From:  freezeTarget,
			Hold:  shownFor,
			Until: sentIntoFrozen, Timeout: ownBrokerFreeze,
			Tell: tellFrozenFor,
		},
		killStep("The kernel drops what the broker never read: the records in its socket are gone."),
		{
			Title: "Start the broker",
			Say: "The broker starts again from its log. The records it never read are not in it. The producer " +
				"reconnects; then the dashboard pauses it and lets the audit read the topic.",
			Watch: "The broker's row running; the producer publishing again.",
			From:  startOwnDown,
			Until: brokerBack, Timeout: time.Minute,
			Then: pauseForTheAudit,
		},
		{
			Title: "Count what acks=0 lost",
			Say: "Every record the producer counted as sent, set against the topic by content (sensor and " +
				"timestamp): acks=0 gives no offset to look up. A record is lost once a record sent after " +
				"it in its partition is found.",
			Watch: "The timeline: \"records sent with acks=0 lost\", by partition.",
			Event: "lost",
			Until: ackedSettled, Stable: ackedStable, Timeout: 30 * time.Second,
			Tell: tellLostWith(lesson.AcksNone),
			Mark: "zero-after",
		},
		switchAcks(lesson.AcksLeader, "Switch to acks=1",
			"acks=1: the broker answers once it has written the record. The producer flushes and starts "+
				"again with it.", "resume producer"),
		{
			Title: "The same freeze with acks=1",
			Say: "The same freeze: the records wait in the broker's socket again, but now the producer waits " +
				"for their answer and keeps them.",
			Watch: "The broker frozen; the producer row: its records waiting (blocked: N buffered).",
			Event: "frozen",
			From:  freezeTarget,
			Hold:  shownFor,
			Until: heldByFrozen, Timeout: ownBrokerFreeze,
			Tell: tellFrozenFor,
			Mark: "one-frozen",
		},
		killStep("The records in its socket are gone again, but the producer never had an answer for them: it still holds them."),
		{
			Title: "Start it: they are sent again",
			Say: "The broker starts again. The producer sends the records it was holding again, and the " +
				"broker writes them; then the dashboard pauses it and lets the audit read the topic.",
			Watch: "\"unblocked after X s: the buffered records land\" on the timeline.",
			Event: "unblocked after",
			From:  startOwnDown,
			Until: brokerBack, Timeout: time.Minute,
			Then: pauseForTheAudit,
		},
		{
			Title: "Count what acks=1 lost",
			Say:   "None: the broker answered only for records it had written, and the rest were sent again.",
			Watch: "The checks.",
			Until: ackedSettled, Stable: ackedStable, Timeout: 30 * time.Second,
			Tell: tellLostWith(lesson.AcksLeader),
			Mark: "one-after",
		},
		switchAcks(lesson.AcksAll, "Back to acks=all",
			"acks=all with idempotence again. The records acks=0 lost stay lost: t keeps listing them.",
			"resume producer"),
	},
	Checks: []Check{
		sentButLost("start", "zero-after"),
		writesWaited(lesson.AcksLeader, "the broker was frozen", "one-frozen"),
		nothingLostWith(lesson.AcksLeader, "the broker froze", "one-frozen", "one-after"),
	},
	CleanupFrom: thawOwn,
}

// killStep kills the frozen broker (SIGKILL); say is what that costs.
func killStep(say string) Step {
	return Step{
		Title: "Kill the frozen broker",
		Say:   "A SIGKILL while it is frozen. " + say,
		Watch: "The broker's row crashed (SIGKILL).",
		Event: "crashed",
		From:  killFrozen,
		Hold:  shownFor,
		Until: brokerKilled,
	}
}

// thawOwn thaws the dashboard's frozen brokers, starts those down and puts
// the producer back on acks=all: a run stopped midway leaves no broker
// frozen (in a cluster, to be fenced).
func thawOwn(o Observation) string {
	var lines []string
	for _, n := range ownBrokers(o) {
		switch p := o.Proc(n); {
		case p.Alive && p.Frozen:
			lines = append(lines, "thaw "+n)
		case !p.Alive && p.LastExit != nil:
			lines = append(lines, "start "+n)
		}
	}
	return strings.Join(append(lines, "resume producer", "acks all"), "\n")
}
