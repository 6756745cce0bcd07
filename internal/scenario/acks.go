package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/cluster"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// The acks lesson (seed 002): with acks=1 the leader confirms a write
// alone, and a write it confirmed an instant before it died, before its
// followers copied it, is lost; with acks=all and min.insync.replicas=2 a
// confirmed write survives the loss of any one broker.
//
// The loss is staged, not waited for: the two followers of the busiest
// partition's leader are frozen (SIGSTOP: they stop fetching), the leader
// confirms writes only it has, and it is killed as soon as the producer
// logged one of them; the followers are thawed at once. They were frozen
// for a second or two, less than the controller's broker session timeout
// (5 s in the lab's cluster), so the controller never fenced them: they
// are still in the ISR, and it elects one of them, which never had those
// writes. The new leader gives their offsets to the next records; the old
// leader, when it returns, truncates its log to the new leader's.

// acksFreezeBound is how long the followers may be frozen before the
// lesson no longer holds: the controller fences a broker it has not heard
// from for its session timeout, and a heartbeat may be a second old when
// the freeze begins (measured on a loaded 2-core machine: 3.5 s of freeze
// already had a follower fenced once in four tries).
const acksFreezeBound = cluster.SessionTimeout

// acksFreezeTimeout bounds the wait for the writes with both followers
// frozen: past it the controller would fence them and the lesson would be
// another one.
const acksFreezeTimeout = 3 * time.Second

// heldFor: acks=all writes count as held once none was acknowledged for
// this long while some wait (a healthy one takes milliseconds; the
// producer sends every second and reports every second).
const heldFor = time.Second

// ackedStable: the read that made ackedSettled hold and the lab's next
// read of the producer's log (every 0.5 s), so a line written as it
// paused is not missed.
const ackedStable = 600 * time.Millisecond

// busiest is the partition with the most sensors (the lowest on a tie)
// and its leader, from fresh metadata with every replica's broker up.
func busiest(o Observation) (board.PartitionRow, error) {
	if !o.Parts.Fresh() {
		return board.PartitionRow{}, errors.New("the topic's metadata is not fresh")
	}
	rows := slices.Clone(o.Parts.Rows)
	slices.SortStableFunc(rows, func(a, b board.PartitionRow) int { return cmp.Compare(len(b.Sensors), len(a.Sensors)) })
	r := rows[0]
	if r.Leaderless || !o.Proc(board.ClusterBroker(int(r.Leader))).Alive {
		return r, fmt.Errorf("partition %d has no live leader", r.Partition)
	}
	if len(followers(r)) == 0 {
		return r, fmt.Errorf("partition %d has no follower", r.Partition)
	}
	return r, nil
}

// followers are the brokers holding a replica of r besides its leader.
func followers(r board.PartitionRow) []string {
	var out []string
	for _, n := range r.Replicas {
		if n != r.Leader {
			out = append(out, board.ClusterBroker(int(n)))
		}
	}
	return out
}

// freezeFollowers freezes the followers of the busiest partition's leader
// and, once the step's condition holds, kills the leader and thaws them.
func freezeFollowers(o Observation) (do, then string, err error) {
	r, err := busiest(o)
	if err != nil {
		return "", "", err
	}
	fs := followers(r)
	var d, t []string
	for _, f := range fs {
		d = append(d, "freeze "+f)
	}
	t = append(t, "crash "+board.ClusterBroker(int(r.Leader)))
	for _, f := range fs {
		t = append(t, "thaw "+f)
	}
	return strings.Join(d, "\n"), strings.Join(t, "\n"), nil
}

// startDown starts the cluster's brokers that are down.
func startDown(o Observation) (do, then string, err error) {
	var d []string
	for _, n := range downBrokers(o) {
		d = append(d, "start "+n)
	}
	if len(d) == 0 {
		return "", "", errors.New("no broker of the cluster is down")
	}
	return strings.Join(d, "\n"), "", nil
}

func downBrokers(o Observation) []string {
	var out []string
	for i := 1; i <= clusterBrokers; i++ {
		if n := board.ClusterBroker(i); !o.Proc(n).Alive {
			out = append(out, n)
		}
	}
	return out
}

// frozenPartition is the partition whose leader runs while every other
// replica's broker is frozen, and when the last of them froze.
func frozenPartition(o Observation) (board.PartitionRow, time.Time, bool) {
	for _, r := range o.Parts.Rows {
		lead := o.Proc(board.ClusterBroker(int(r.Leader)))
		fs := followers(r)
		if r.Leaderless || !lead.Alive || lead.Frozen || len(fs) == 0 {
			continue
		}
		var at time.Time
		all := true
		for _, f := range fs {
			p := o.Proc(f)
			all = all && p.Frozen
			at = maxTime(at, p.FrozenAt)
		}
		if all {
			return r, at, true
		}
	}
	return board.PartitionRow{}, time.Time{}, false
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// acksRunning: the running producer uses acks and has had a record of
// every partition acknowledged with it.
func acksRunning(acks lesson.Acks) *Cond {
	return &Cond{
		What: fmt.Sprintf("the producer writing with acks=%s, a record of every partition acknowledged with it", acks),
		Holds: func(o Observation) bool {
			if o.Acks.Running != string(acks) || len(o.Parts.Rows) == 0 {
				return false
			}
			for _, r := range o.Parts.Rows {
				if o.Acks.Latest[r.Partition].Acks != string(acks) {
					return false
				}
			}
			return true
		},
	}
}

// ackedAlone: the followers are frozen and the producer logged writes of
// their partition acknowledged in two rounds after they froze (acks=1:
// the leader alone has the second; the first may lie in the frozen
// followers' sockets, AckedInTwoRoundsSince).
var ackedAlone = &Cond{
	What: "writes acknowledged by the leader alone: a second round since its followers froze (logged by the producer)",
	Holds: func(o Observation) bool {
		r, at, ok := frozenPartition(o)
		return ok && o.Acks.AckedInTwoRoundsSince(r.Partition, at)
	},
}

// writesHeld: the followers are frozen, nothing of their partition was
// acknowledged since, and the producer reports records waiting with none
// acknowledged for heldFor, after the freeze.
var writesHeld = &Cond{
	What: "the producer's writes waiting: none acknowledged since the followers froze",
	Holds: func(o Observation) bool {
		r, at, ok := frozenPartition(o)
		a := o.Acks
		return ok && !a.AckedSince(r.Partition, at) && a.WaitingAt.After(at) && a.Waiting > 0 && a.WaitingFor >= heldFor
	},
}

// deadLeaderReplaced: one broker of the cluster is down, it leads nothing
// and is in no ISR, and every partition has a leader (fresh metadata).
var deadLeaderReplaced = &Cond{
	What: "the dead leader's partition led by another broker, the dead broker out of every ISR",
	Holds: func(o Observation) bool {
		down := downBrokers(o)
		if len(down) != 1 {
			return false
		}
		n, _ := board.ClusterBrokerNumber(down[0])
		return leadersMovedOff(int32(n)).Holds(o)
	},
}

// pauseForTheAudit stops the producer before a count: the next step waits
// for ackedSettled, which is all the count needs. Not measure's
// wait-caught-up: the consumers' catching up after the broker's return is
// not this lesson.
const pauseForTheAudit = "pause producer"

// ackedSettled: the producer is paused and the audit has read the offset of
// every write it acknowledged, so each is either held or lost. The producer
// writes its log out as it pauses and the lab reads it periodically: a
// step waits for this to hold for ackedStable.
var ackedSettled = &Cond{
	What: "the producer paused, every acknowledged write's offset read by the audit",
	Holds: func(o Observation) bool {
		p := o.Proc(board.Producer)
		return p.Alive && p.Producer.Paused && o.Acks.Seen && o.Acks.Pending == 0 && o.Acks.Acknowledged > 0
	},
}

// tellFrozen names the freeze, the write acknowledged during it and the
// crash (read after the step's Then: the leader killed, the followers
// thawed).
func tellFrozen(o Observation) string {
	dead := downBrokers(o)
	var parts []string
	for i := 1; i <= clusterBrokers; i++ {
		p := o.Proc(board.ClusterBroker(i))
		if !p.FrozenAt.IsZero() && p.ThawedAt.After(p.FrozenAt) {
			parts = append(parts, fmt.Sprintf("%s frozen %.1f s", p.Name, p.ThawedAt.Sub(p.FrozenAt).Seconds()))
		}
	}
	s := fmt.Sprintf("%s; %s killed", strings.Join(parts, ", "), strings.Join(dead, ", "))
	for _, r := range o.Parts.Rows {
		if l, ok := o.Acks.Latest[r.Partition]; ok && r.LeaderDown {
			s += fmt.Sprintf("; its partition %d's last acknowledged write: offset %d (%s, acks=%s)", r.Partition, l.Offset, l.Sensor, l.Acks)
		}
	}
	return s
}

func tellLost(o Observation) string {
	lost := lostWith(o, "")
	if len(lost) == 0 {
		return fmt.Sprintf("no acknowledged write lost of %s", board.Count(o.Acks.Acknowledged))
	}
	return fmt.Sprintf("%s lost of %s: %s", board.Plural(int64(len(lost)), "acknowledged write"),
		board.Count(o.Acks.Acknowledged), board.LostRanges(lost))
}

// lostWith is the acknowledged writes the topic does not hold, of the
// given acks setting ("" any).
func lostWith(o Observation, acks string) []board.LostWrite {
	var out []board.LostWrite
	for _, w := range o.Acks.Missing {
		if acks == "" || w.Acks == acks {
			out = append(out, w)
		}
	}
	return out
}

// frozenUnderSessionTimeout: every follower frozen in the step that ended
// at mark was thawed within the session timeout, and the new leader came
// from the ISR the dead leader's partition had (the followers were not
// fenced).
func frozenUnderSessionTimeout(acks lesson.Acks, frozen, moved string) Check {
	return between(fmt.Sprintf("acks=%s: the followers, frozen under the %s session timeout, stayed in the ISR; one of them was elected", acks, acksFreezeBound),
		frozen, moved, func(f, m Observation) (bool, string) {
			lens, longest := frozenSpans(f)
			moves, elected := electedFromISR(f, m)
			ok := len(lens) > 0 && longest < acksFreezeBound && elected && len(moves) > 0
			return ok, fmt.Sprintf("frozen %s; %s", orDash(strings.Join(lens, ", ")), orDash(strings.Join(moves, "; ")))
		})
}

// frozenSpans lists how long each broker frozen and thawed by o stayed
// frozen, and the longest of those spans.
func frozenSpans(o Observation) (lens []string, longest time.Duration) {
	for i := 1; i <= clusterBrokers; i++ {
		p := o.Proc(board.ClusterBroker(i))
		if p.FrozenAt.IsZero() || !p.ThawedAt.After(p.FrozenAt) {
			continue
		}
		d := p.ThawedAt.Sub(p.FrozenAt)
		longest = max(longest, d)
		lens = append(lens, fmt.Sprintf("%s %.1f s", p.Name, d.Seconds()))
	}
	return lens, longest
}

// electedFromISR describes, for each partition whose leader was down at f,
// the leader m shows; elected is false when one has no leader from the
// ISR it had, or lost a follower from its ISR (fenced).
func electedFromISR(f, m Observation) (moves []string, elected bool) {
	elected = true
	for _, r := range f.Parts.Rows {
		if !r.LeaderDown {
			continue
		}
		var now *board.PartitionRow
		for i := range m.Parts.Rows {
			if m.Parts.Rows[i].Partition == r.Partition {
				now = &m.Parts.Rows[i]
			}
		}
		if now == nil || now.Leaderless || now.Leader == r.Leader || !slices.Contains(r.ISR, now.Leader) {
			elected = false
			moves = append(moves, fmt.Sprintf("p%d leader %d, ISR %s: no leader from it", r.Partition, r.Leader, board.NodeList(r.ISR)))
			continue
		}
		// Both followers still in: none was fenced.
		for _, n := range r.Replicas {
			if n != r.Leader && !slices.Contains(now.ISR, n) {
				elected = false
			}
		}
		took := ""
		if now.LastMove != nil && now.LastMove.After > 0 {
			took = fmt.Sprintf(" %.1f s after the crash", now.LastMove.After.Seconds())
		}
		moves = append(moves, fmt.Sprintf("p%d leader %d → %d%s, from its ISR %s; ISR now %s",
			r.Partition, r.Leader, now.Leader, took, board.NodeList(r.ISR), board.NodeList(now.ISR)))
	}
	return moves, elected
}

// writesLost: at the second mark, with the audit caught up, writes
// acknowledged with acks=1 since the first are not in the topic (a lab
// whose run directory saw the lesson before lists those too: they are not
// counted).
func writesLost(start, after string) Check {
	return between("acks=1: acknowledged writes lost (not in the topic read back)", start, after, func(s, a Observation) (bool, string) {
		lost := newlyLost(s, a, lesson.AcksLeader)
		obs := fmt.Sprintf("%s of %s acknowledged writes since the lesson began not in the topic (audit read Σ%d records, %d offsets not read yet)",
			board.Count(int64(len(lost))), board.Count(a.Acks.Acknowledged-s.Acks.Acknowledged), a.Usage.AuditCount, a.Acks.Pending)
		if len(lost) > 0 {
			obs += ": " + board.LostRanges(lost)
		}
		if before := len(s.Acks.Missing); before > 0 {
			obs += fmt.Sprintf("; %s lost before it", board.Plural(int64(before), "write"))
		}
		return len(lost) > 0 && a.Acks.Pending == 0, obs
	})
}

// nothingLostWith: between the two marks the producer wrote with acks,
// had writes acknowledged after the fault, and at the second, with the
// audit caught up, every write acknowledged with acks is in the topic;
// since names the fault ("the followers froze").
func nothingLostWith(acks lesson.Acks, since, frozen, after string) Check {
	return between(fmt.Sprintf("acks=%s: every acknowledged write is in the topic", acks), frozen, after, func(f, a Observation) (bool, string) {
		lost := lostWith(a, string(acks))
		obs := fmt.Sprintf("%s acknowledged with acks=%s not in the topic; %s acknowledged since %s; %d offsets not read yet",
			board.Count(int64(len(lost))), acks, board.Count(a.Acks.Acknowledged-f.Acks.Acknowledged), since, a.Acks.Pending)
		if len(lost) > 0 {
			obs += ": " + board.LostRanges(lost)
		}
		return len(lost) == 0 && a.Acks.Pending == 0 && a.Acks.Acknowledged > f.Acks.Acknowledged && f.Acks.Running == string(acks), obs
	})
}

// writesWaited: with acks the writes were held, not acknowledged, while
// the fault (while "the followers were frozen") lasted.
func writesWaited(acks lesson.Acks, while, mark string) Check {
	return Check{
		What:  fmt.Sprintf("acks=%s: the writes waited while %s", acks, while),
		Needs: []string{mark},
		Eval: func(ms Marks) (bool, string) {
			a := ms[mark].Acks
			return a.Running == string(acks) && a.Waiting > 0 && a.WaitingFor >= heldFor,
				fmt.Sprintf("the producer held %s, none acknowledged for %.1f s (acks=%s)",
					board.Plural(a.Waiting, "record"), a.WaitingFor.Seconds(), orDash(a.Running))
		},
	}
}

var acksLoss = Scenario{
	Name:       "acks-loss",
	Title:      "Cluster: acks=1 loses acknowledged writes, acks=all does not",
	Summary:    "acks=1: the leader confirms alone and dies, its writes are lost; acks=all: none lost",
	Brokers:    clusterBrokers,
	UsageMode:  "guarded",
	UsageReset: "latest",
	Article: "With acks=1 the leader confirms a write as soon as it has written it itself. If it fails an " +
		"instant after confirming, before the followers have copied the write, the write is lost: the " +
		"controller elects a follower from the ISR that never had it. With acks=all and " +
		"min.insync.replicas=2 the leader confirms only once every replica in the ISR has the write, so a " +
		"confirmed write survives any single failure; the price is waiting.",
	Steps: []Step{
		{
			Title: "Three brokers, acks=all",
			Say: "The producer writes with acks=all and idempotence. The dashboard will act on the busiest " +
				"partition (most sensors): its leader and the two followers that copy it.",
			Watch: "The partitions line: leader and isr of p0, p1, p2 (t shows them in full with the sensors of each).",
			Until: &Cond{What: wholeAgain.What + ", every process running", Holds: func(o Observation) bool {
				return stackReady.Holds(o) && wholeAgain.Holds(o)
			}},
			Stable: time.Second, Timeout: 3 * time.Minute,
			Tell: func(o Observation) string {
				r, err := busiest(o)
				if err != nil {
					return err.Error()
				}
				return fmt.Sprintf("busiest: p%d (%d sensors), led by broker-%d, followers %s; %s",
					r.Partition, len(r.Sensors), r.Leader, strings.Join(followers(r), " "), tellLeaders(o))
			},
			Mark: "start",
		},
		switchAcks(lesson.AcksLeader, "Switch to acks=1",
			"acks=1: the leader confirms a write as soon as it wrote it, without waiting for any follower. "+
				"librdkafka allows idempotence only with acks=all, so the producer runs without it: a retry "+
				"after a lost confirmation can be written twice. The producer flushes and starts again with it.",
			""),
		{
			Title: "Freeze followers, kill leader",
			Say: "The dashboard freezes (SIGSTOP) the two followers: they stop copying, but the controller keeps " +
				"them in the ISR until it misses their heartbeats for 5 s (broker.session.timeout.ms). The " +
				"leader goes on confirming writes. The first round after the freeze may still reach them: the fetch " +
				"each sent before it waits at the leader, is answered with that round, and lies in their socket " +
				"until they wake. The second round has no fetch to go out on: only the leader has it. As soon " +
				"as the producer logs it, the dashboard kills the leader (SIGKILL) and thaws the followers: " +
				"frozen two or three seconds, never fenced.",
			Watch: "Two broker rows frozen, then the leader crashed and the followers thawed, within a couple of seconds.",
			Event: "thawed",
			From:  freezeFollowers,
			Until: ackedAlone, Timeout: acksFreezeTimeout,
			Tell: tellFrozen,
			Mark: "acks1-frozen",
		},
		{
			Title: "A follower without them leads",
			Say: "The controller fences the dead leader after its session timeout and elects a follower from " +
				"the ISR. Unclean leader election is off, but this is not unclean: the followers were in the ISR " +
				"all along. They never had the last writes; the new leader gives their offsets to the next records.",
			Watch: "\"partition N leader X → Y in 5 s\", then \"acknowledged writes lost\" on the watch line.",
			Event: "lost:",
			Until: deadLeaderReplaced, Timeout: failoverTimeout,
			Tell: tellLeaders,
			Mark: "acks1-moved",
		},
		{
			Title: "The old leader truncates",
			Say: "Restart the dead broker. It asks the new leader where its epoch ended and truncates its log " +
				"there: the writes it confirmed are gone from every replica. With acks=1 still on, even the " +
				"controller handing the leadership back to it can lose a write or two. Then the dashboard " +
				"pauses the producer and lets the audit read every acknowledged offset.",
			Watch: "t: the Acked line lists the lost writes, partition and offsets.",
			Event: "lost:",
			From:  startDown,
			Until: wholeAgain, Timeout: 2 * time.Minute,
			Then: pauseForTheAudit,
		},
		{
			Title: "Count what acks=1 lost",
			Say: "Every write the producer was told succeeded, set against the topic read back by content " +
				"(sensor and timestamp): the offsets alone would lie, the new leader reused them. No consumer " +
				"ever saw the lost writes (they were above the high watermark): the usage stays exact, and " +
				"nobody downstream can tell.",
			Watch: "t: the Acked line, the lost writes by partition and offset.",
			Until: ackedSettled, Stable: ackedStable, Timeout: 30 * time.Second,
			Tell: tellLost,
			Mark: "acks1-after",
		},
		switchAcks(lesson.AcksAll, "Back to acks=all",
			"acks=all (idempotent again): the leader confirms only once every in-sync replica has the "+
				"write. The producer flushes and starts again with it.",
			"resume producer"),
		{
			Title: "The same freeze with acks=all",
			Say: "The same steps: freeze the followers, kill the leader, thaw them. This time the leader cannot " +
				"confirm: the writes wait for the followers, and the producer keeps them.",
			Watch: "Two broker rows frozen again, then the leader crashed: the producer row says retrying kafka while its writes wait (\"blocked: N buffered\" on the timeline).",
			Event: "thawed",
			From:  freezeFollowers,
			Until: writesHeld, Timeout: acksFreezeTimeout,
			Tell: tellFrozen,
			Mark: "all-frozen",
		},
		{
			Title: "Elected, and the writes land",
			Say: "The controller elects a follower from the ISR; the producer sends the writes it kept to the new " +
				"leader, which confirms them once both in-sync replicas have them.",
			Watch: "\"unblocked after X s: the buffered records land\" on the watch line.",
			Event: "unblocked after",
			Until: &Cond{What: deadLeaderReplaced.What + "; " + producerAcked.What, Holds: func(o Observation) bool {
				return deadLeaderReplaced.Holds(o) && producerAcked.Holds(o)
			}},
			Timeout: failoverTimeout,
			Tell:    tellLeaders,
			Mark:    "all-moved",
		},
		{
			Title: "Back, and read the topic",
			Say: "Restart the dead broker; it truncates the writes nobody confirmed (the producer sent them " +
				"again to the new leader). The audit reads every acknowledged offset once more.",
			Watch: "t: the Acked line: nothing more lost.",
			From:  startDown,
			Until: wholeAgain, Timeout: 2 * time.Minute,
			Then: pauseForTheAudit,
		},
		{
			Title: "Count what acks=all lost",
			Say:   "None: a write acknowledged with acks=all was on both in-sync replicas when it was confirmed.",
			Watch: "t: the Acked line; the checks.",
			Until: ackedSettled, Stable: ackedStable, Timeout: 30 * time.Second,
			Tell: tellLost,
			Mark: "all-after",
		},
		{
			Title: "Publishing again",
			Say: "The lesson depends on Kafka's settings: unclean leader election off, the session and " +
				"replica lag timeouts (docs/cluster.md). The lost acks=1 writes stay lost: t keeps listing them.",
			Do: "resume producer",
		},
	},
	Checks: []Check{
		frozenUnderSessionTimeout(lesson.AcksLeader, "acks1-frozen", "acks1-moved"),
		writesLost("start", "acks1-after"),
		writesWaited(lesson.AcksAll, "the followers were frozen", "all-frozen"),
		frozenUnderSessionTimeout(lesson.AcksAll, "all-frozen", "all-moved"),
		nothingLostWith(lesson.AcksAll, "the followers froze", "all-frozen", "all-after"),
	},
	CleanupFrom: thawOwn,
}

// switchAcks is the step that switches the producer to acks to and waits
// until it runs with them; do is a script line run first ("" for none).
func switchAcks(to lesson.Acks, title, say, do string) Step {
	inForce := "acks=" + string(to) + " in force"
	return Step{
		Title: title,
		Say:   say,
		Watch: "\"" + inForce + "\" on the watch line.",
		Event: inForce,
		Do:    do,
		Press: &Press{Action: action.Acks, Process: board.Producer, Value: string(to)},
		Until: acksRunning(to), Timeout: 30 * time.Second,
	}
}
