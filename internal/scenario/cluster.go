package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The cluster lesson (seed 002): what sits under the consumers. A key
// decides the partition and so the order per sensor; each partition has a
// leader and followers; acks=all with min.insync.replicas decides
// durability; when a leader dies the controller elects a new one from the
// ISR. These scenarios need --cluster 3 (three Apache Kafka brokers and a
// KRaft controller under the dashboard); every number is read from the
// cluster's metadata, the topic's watermarks and the audit of its content.

// clusterBrokers is how many brokers the cluster scenarios need.
const clusterBrokers = 3

// failoverTimeout bounds a leader election: the controller fences a
// silent broker after its session timeout (5 s here), and the metadata is
// polled every 0.5 s.
const failoverTimeout = 60 * time.Second

var (
	victim = board.ClusterBroker(2)
	third  = board.ClusterBroker(3)
)

// inSync: every partition has a leader and n in-sync replicas (and, with
// lead set, node lead leads one of them).
func inSync(n int, lead int32) *Cond {
	what := fmt.Sprintf("every partition with a leader and %d in-sync replicas", n)
	if lead > 0 {
		what += fmt.Sprintf(", broker-%d leading one", lead)
	}
	return &Cond{What: what, Holds: func(o Observation) bool {
		return o.Parts.AllInSync(n) && (lead <= 0 || len(o.Parts.LedBy(lead)) > 0)
	}}
}

// wholeAgain: every partition in sync on every broker and led by its
// preferred replica again. The controller hands leadership back within
// its 10 s rebalance; waiting for it keeps that election from coinciding
// with the measurement's pause: a new leader elected with no record
// arriving can leave its high watermark unreadable for as long as the
// producer stays paused.
var wholeAgain = &Cond{
	What: fmt.Sprintf("every partition with a leader and %d in-sync replicas, led by its preferred replica", clusterBrokers),
	Holds: func(o Observation) bool {
		return inSync(clusterBrokers, 0).Holds(o) && o.Parts.Balanced()
	},
}

// clusterReady: the stack is ready and the cluster whole, broker-2
// leading a partition (the controller spreads leaders back every 10 s).
var clusterReady = &Cond{
	What: "every process running, consumers caught up; every partition with 3 in-sync replicas, broker-2 leading one",
	Holds: func(o Observation) bool {
		return stackReady.Holds(o) && inSync(clusterBrokers, 2).Holds(o)
	},
}

// leadersMovedOff: node leads nothing and is in no ISR; every partition
// has a leader.
func leadersMovedOff(node int32) *Cond {
	return &Cond{
		What: fmt.Sprintf("every partition with a leader other than broker-%d, broker-%d out of every ISR", node, node),
		Holds: func(o Observation) bool {
			if !o.Parts.Fresh() {
				return false
			}
			for _, r := range o.Parts.Rows {
				if r.Leaderless || r.Leader == node || slices.Contains(r.ISR, node) {
					return false
				}
			}
			return true
		},
	}
}

// producerRefused: two brokers down, the producer's records are not
// acknowledged and the metadata shows the ISR below min.insync.replicas.
var producerRefused = &Cond{
	What: "the producer blocked and every partition's ISR below min.insync.replicas",
	Holds: func(o Observation) bool {
		if o.Proc(board.Producer).Producer.Blocked <= 0 || !o.Parts.Seen || len(o.Parts.Rows) == 0 {
			return false
		}
		for _, r := range o.Parts.Rows {
			if !r.BelowMinISR {
				return false
			}
		}
		return true
	},
}

// offsetsPoll is how often the lab reads the watermarks and the metadata.
const offsetsPoll = 500 * time.Millisecond

var producerAcked = &Cond{
	What:  "the producer's records acknowledged again",
	Holds: func(o Observation) bool { p := o.Proc(board.Producer); return p.Alive && p.Producer.Blocked == 0 },
}

// tellLeaders: each partition's leader and ISR.
func tellLeaders(o Observation) string {
	parts := make([]string, 0, len(o.Parts.Rows))
	for _, r := range o.Parts.Rows {
		parts = append(parts, fmt.Sprintf("p%d leader %d isr %s", r.Partition, r.Leader, board.NodeList(r.ISR)))
	}
	return strings.Join(parts, ", ")
}

// moves describes the leader changes off node seen at o, with their times.
func moves(o Observation, node int32) ([]string, time.Duration) {
	var out []string
	var slowest time.Duration
	for _, r := range o.Parts.Rows {
		if m := r.LastMove; m != nil && m.From == node {
			s := fmt.Sprintf("p%d leader %d → %d", r.Partition, m.From, m.To)
			if m.After > 0 {
				s += fmt.Sprintf(" in %.1f s", m.After.Seconds())
				slowest = max(slowest, m.After)
			}
			out = append(out, s)
		}
	}
	return out, slowest
}

func tellMovedOff(node int32) func(Observation) string {
	return func(o Observation) string {
		ms, _ := moves(o, node)
		return fmt.Sprintf("broker-%d's partitions have new leaders: %s (after %s exited; metadata polled every 0.5 s); now %s",
			node, strings.Join(ms, ", "), board.ClusterBroker(int(node)), tellLeaders(o))
	}
}

// leaderElected: every partition node led at the first mark has a new
// leader at the second, taken from the first mark's ISR, within bound.
func leaderElected(before, moved string, node int32) Check {
	return between(fmt.Sprintf("broker-%d's partitions got new leaders from the ISR", node), before, moved, func(b, m Observation) (bool, string) {
		led := b.Parts.LedBy(node)
		if len(led) == 0 {
			return false, fmt.Sprintf("broker-%d led no partition before the crash (%s)", node, tellLeaders(b))
		}
		ok := true
		for _, p := range led {
			var was, now *board.PartitionRow
			for i := range b.Parts.Rows {
				if b.Parts.Rows[i].Partition == p {
					was = &b.Parts.Rows[i]
				}
			}
			for i := range m.Parts.Rows {
				if m.Parts.Rows[i].Partition == p {
					now = &m.Parts.Rows[i]
				}
			}
			if was == nil || now == nil || now.Leader < 0 || now.Leader == node || !slices.Contains(was.ISR, now.Leader) {
				ok = false
			}
		}
		ms, slowest := moves(m, node)
		obs := fmt.Sprintf("broker-%d led %v; %s", node, led, strings.Join(ms, ", "))
		if slowest <= 0 {
			return false, obs + "; the election was not timed (no exit of the old leader seen)"
		}
		return ok && len(ms) >= len(led), obs + fmt.Sprintf("; slowest %.1f s after the crash (the controller's broker session timeout is 5 s)", slowest.Seconds())
	})
}

// carriedOn: between the two marks the topic grew on every partition and
// consumer-current kept up with it.
func carriedOn(moved, during string) Check {
	return between("publishing and consuming went on with 2 of 3 brokers", moved, during, func(a, b Observation) (bool, string) {
		grew := 0
		for p, hw := range b.HWM {
			if hw > a.HWM[p] {
				grew++
			}
		}
		obs := fmt.Sprintf("log end Σ%d → Σ%d (%d/%d partitions grew) in %s; consumers caught up %v; %s",
			a.HWMSum(), b.HWMSum(), grew, len(b.HWM), b.At.Sub(a.At).Round(100*time.Millisecond), b.CaughtUp, tellLeaders(b))
		return grew == len(b.HWM) && len(b.HWM) > 0 && b.CaughtUp && allMatchTruth(b), obs
	})
}

// backInSync: the broker is back in every ISR.
func backInSync(mark string, node int32) Check {
	return Check{
		What:  fmt.Sprintf("broker-%d back in every ISR after its restart", node),
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			in := 0
			for _, r := range o.Parts.Rows {
				if slices.Contains(r.ISR, node) {
					in++
				}
			}
			p := o.Proc(board.ClusterBroker(int(node)))
			return in == len(o.Parts.Rows) && in > 0, fmt.Sprintf("in %d/%d ISRs, %s up %s; %s", in, len(o.Parts.Rows),
				p.Name, p.Uptime.Round(100*time.Millisecond), tellLeaders(o))
		},
	}
}

// writesRefused: with the ISR below min.insync.replicas the producer got
// no acknowledgement between the two marks (blocked all along, its
// acknowledged count unchanged) while its buffer grew, and the cause shown
// is the broker's NOT_ENOUGH_REPLICAS. The log end is compared too when it
// was read at both marks after the ISR shrank: a leader elected below
// min.insync.replicas may answer OFFSET_NOT_AVAILABLE ("leader high
// watermark is not caught up") all through the refusal, and a stale read
// proves nothing (seen on Apache Kafka 4.1).
func writesRefused(refused, held string) Check {
	return between("acks=all writes refused with one replica in sync (NOT_ENOUGH_REPLICAS), nothing acknowledged", refused, held, func(a, b Observation) (bool, string) {
		pa, pb := a.Proc(board.Producer), b.Proc(board.Producer)
		span := b.At.Sub(a.At)
		// Blocked since before the first mark and never unblocked since.
		continuous := pa.Producer.Blocked > 0 && pb.Producer.Blocked >= pa.Producer.Blocked+span-time.Second
		logEnd, logEndOK := logEndBetween(a, b, func(x, y int64) bool { return x == y })
		obs := fmt.Sprintf("acknowledged %d → %d and buffered %d → %d over %s, blocked %s → %s; %s; cause: %s",
			pa.Producer.Produced, pb.Producer.Produced, pa.Producer.Buffered, pb.Producer.Buffered, span.Round(100*time.Millisecond),
			pa.Producer.Blocked.Round(100*time.Millisecond), pb.Producer.Blocked.Round(100*time.Millisecond), logEnd, orDash(pb.Producer.BlockedCause))
		return continuous && pb.Producer.Produced == pa.Producer.Produced && pb.Producer.Buffered > pa.Producer.Buffered && logEndOK &&
			strings.Contains(pb.Producer.BlockedCause, "NOT_ENOUGH_REPLICAS"), obs
	})
}

// logEndBetween compares the log ends of two marks with ok when both were
// read fresh, the first after the ISRs it shows came into force; otherwise
// it says why they are not compared (and does not fail).
func logEndBetween(a, b Observation, ok func(first, second int64) bool) (string, bool) {
	if a.HWMStale || b.HWMStale || a.HWMAt.Sub(a.Parts.ISRSince) < offsetsPoll {
		return fmt.Sprintf("log end not compared: not read since the ISR changed (stale %v → %v)", a.HWMStale, b.HWMStale), true
	}
	return fmt.Sprintf("log end Σ%d → Σ%d", a.HWMSum(), b.HWMSum()), ok(a.HWMSum(), b.HWMSum())
}

// bufferedLanded: after the ISR grew back the buffered records were
// acknowledged (the producer's count grew by at least what it held), it is
// no longer blocked, and consumer-current equals the audit's read of the
// topic.
func bufferedLanded(held, after string) Check {
	return between("the buffered records landed once the ISR grew back", held, after, func(h, a Observation) (bool, string) {
		ph, pa := h.Proc(board.Producer), a.Proc(board.Producer)
		logEnd, logEndOK := logEndBetween(h, a, func(x, y int64) bool { return y >= x+ph.Producer.Buffered })
		obs := fmt.Sprintf("%d buffered; acknowledged %d → %d; %s; producer blocked %v; %d/%d sensors match the audit",
			ph.Producer.Buffered, ph.Producer.Produced, pa.Producer.Produced, logEnd, pa.Producer.Blocked > 0, matching(a), len(a.Sensors.Rows))
		return pa.Producer.Produced >= ph.Producer.Produced+ph.Producer.Buffered && logEndOK && pa.Producer.Blocked == 0 && allMatchTruth(a), obs
	})
}

func matching(o Observation) int {
	n := 0
	for _, r := range o.Sensors.Rows {
		if r.Truth == board.TruthMatch {
			n++
		}
	}
	return n
}

// keysPlaced: every sensor's records are in exactly the partition the
// producer's partitioner gives its key, as the audit read the topic.
func keysPlaced(mark string) Check {
	return Check{
		What:  "every sensor's records are in the partition its key hashes to",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			want := map[string]int32{}
			var layout []string
			for _, r := range o.Parts.Rows {
				for _, s := range r.Sensors {
					want[s] = r.Partition
				}
				layout = append(layout, fmt.Sprintf("p%d %d sensors", r.Partition, len(r.Sensors)))
			}
			var off []string
			placed := 0
			for id, k := range o.Keys {
				w, ok := want[id]
				if ok && len(k.Partitions) == 1 && k.Partitions[0] == w {
					placed++
					continue
				}
				off = append(off, fmt.Sprintf("%s in %v, key hashes to %d", id, k.Partitions, w))
			}
			slices.Sort(off)
			obs := fmt.Sprintf("%d/%d sensors each in one partition, the one kafkacfg.PartitionFor gives (%s)",
				placed, len(o.Keys), strings.Join(layout, ", "))
			if len(off) > 0 {
				obs += "; " + strings.Join(first(off, 3), "; ")
			}
			return len(o.Keys) > 0 && placed == len(o.Keys) && len(want) == len(o.Keys), obs
		},
	}
}

// orderKept: across the failover every sensor's records stayed in order
// (no duplicate, no reordering), and each got new records meanwhile.
func orderKept(before, after string) Check {
	return between("order per sensor kept across the failover (no duplicate, no reordering)", before, after, func(b, a Observation) (bool, string) {
		grew, disordered, records := 0, int64(0), int64(0)
		for id, k := range a.Keys {
			disordered += k.Disordered
			records += k.Valid - b.Keys[id].Valid
			if k.Valid > b.Keys[id].Valid {
				grew++
			}
		}
		obs := fmt.Sprintf("%d records of %d/%d sensors across the failover; %d out of order or duplicated in the whole topic",
			records, grew, len(a.Keys), disordered)
		return len(a.Keys) > 0 && grew == len(a.Keys) && disordered == 0, obs
	})
}

var leaderElection = Scenario{
	Name:       "leader-election",
	Title:      "Cluster: a leader dies, the controller elects another",
	Summary:    "kill broker-2, a leader: new leaders from the ISR, publishing goes on",
	Brokers:    clusterBrokers,
	UsageMode:  "guarded",
	UsageReset: "latest",
	Baseline:   true,
	Article: "Each partition has a leader, which takes every read and write, and followers that copy it; " +
		"the followers that are up to date form the ISR (in-sync replicas). When the leader's broker dies " +
		"the controller notices (its heartbeats stop) and elects a new leader from the ISR, so nothing " +
		"acknowledged is lost. Clients find the new leader through metadata and carry on.",
	Steps: []Step{
		{
			Title: "Three brokers",
			Say: "Three Apache Kafka brokers and a KRaft controller run under the dashboard. sensor-data has 3 " +
				"partitions, each replicated on all three brokers; each partition has its own leader.",
			Watch: "The partitions line: leader and isr of p0, p1, p2 (t shows them in full, t again closes).",
			Until: clusterReady, Stable: time.Second, Timeout: 3 * time.Minute,
			Tell: tellLeaders,
			Mark: "before",
		},
		{
			Title: "Kill a leader",
			Say:   "Crash broker-2 (SIGKILL): it leads a partition. Its heartbeats stop; after the session timeout the controller fences it and elects new leaders from the ISR.",
			Watch: "\"partition N leader 2 → M in X s\" on the watch line; broker-2 leaves every isr in the partitions line.",
			Event: "leader 2 →",
			Press: &Press{Action: action.Crash, Process: victim},
			Until: leadersMovedOff(2), Timeout: failoverTimeout,
			Tell: tellMovedOff(2),
			Mark: "moved",
		},
		{
			Title: "Two of three carry on",
			Say:   "With two of three replicas in sync (min.insync.replicas is 2), acks=all writes still succeed: the producer publishes, the consumers read from the new leaders.",
			Watch: "The producer's sent count growing; the consumers' lag back to near 0.",
			Hold:  5 * time.Second,
			Until: stackReady,
			Then:  measure,
			Mark:  "during",
		},
		{
			Title: "Bring it back",
			Say:   "Restart broker-2. It catches up from the leaders and rejoins every ISR; the controller gives it back the leadership it prefers.",
			Watch: "isr [1 2 3] again on every partition.",
			Do:    "resume producer",
			Press: &Press{Action: action.Restart, Process: victim},
			Until: wholeAgain, Timeout: 2 * time.Minute,
			Then: measure,
			Tell: tellLeaders,
			Mark: "after",
		},
	},
	Checks: []Check{
		leaderElected("before", "moved", 2),
		carriedOn("moved", "during"),
		backInSync("after", 2),
		driftUnchanged("guarded usage exact through the failover", "before", "after"),
	},
	Cleanup: "resume producer\nstart " + victim,
}

var minInsync = Scenario{
	Name:       "min-insync",
	Title:      "Cluster: acks=all and min.insync.replicas refuse a write",
	Summary:    "two brokers down: writes refused (NOT_ENOUGH_REPLICAS), buffered, landed",
	Brokers:    clusterBrokers,
	UsageMode:  "guarded",
	UsageReset: "latest",
	Baseline:   true,
	Article: "With acks=all a write is acknowledged only once every replica in the ISR has it, and " +
		"min.insync.replicas sets how small the ISR may get before the leader refuses writes " +
		"(NOT_ENOUGH_REPLICAS) rather than accept data that one more failure would lose. The producer " +
		"retries and keeps the records meanwhile: availability is traded for durability.",
	Steps: []Step{
		{
			Title: "Three in sync",
			Say:   "Replication factor 3, min.insync.replicas 2, the producer uses acks=all and idempotence.",
			Watch: "The partitions line: isr [1 2 3].",
			Until: clusterReady, Stable: time.Second, Timeout: 3 * time.Minute,
			Tell: tellLeaders,
			Mark: "before",
		},
		{
			Title: "One broker down",
			Say:   "Crash broker-2. Two replicas in sync is still enough: writes go on.",
			Watch: "isr [1 3] everywhere; the producer keeps publishing.",
			Press: &Press{Action: action.Crash, Process: victim},
			Until: inSync(2, 0), Timeout: failoverTimeout,
			Tell: tellMovedOff(2),
			Mark: "one-down",
		},
		{
			Title: "Two brokers down",
			Say:   "Crash broker-3 as well. One replica in sync is below min.insync.replicas: the leader refuses every acks=all write.",
			Watch: "The producer row: blocked, N buf; the watch line: NOT_ENOUGH_REPLICAS.",
			Event: "NOT_ENOUGH_REPLICAS",
			Press: &Press{Action: action.Crash, Process: third},
			Until: producerRefused, Timeout: failoverTimeout,
			Tell: func(o Observation) string {
				return "producer blocked: " + orDash(o.Proc(board.Producer).Producer.BlockedCause) + "; " + tellLeaders(o)
			},
			Mark: "refused",
		},
		{
			Title: "Nothing acknowledged",
			Say:   "The producer keeps its records and retries; the log end does not move. Nothing is acknowledged that the cluster could lose.",
			Watch: "The producer's row: N buf growing, its sent count standing still.",
			// The producer repeats its blocked report every second.
			Hold:  6 * time.Second,
			Until: producerRefused,
			Mark:  "held",
		},
		{
			Title: "One back",
			Say:   "Restart broker-3. Once it is back in the ISR there are two in sync again: the buffered records land.",
			Watch: "\"unblocked after X s\" on the watch line.",
			Event: "unblocked after",
			Press: &Press{Action: action.Restart, Process: third},
			Until: producerAcked, Timeout: 2 * time.Minute,
			Mark: "landed",
		},
		restartUntilWhole(victim, "All back",
			"Restart broker-2 too: the ISR is whole again.",
			"isr [1 2 3] on every partition, then each led by its preferred replica again (t shows it)."),
	},
	Checks: []Check{
		writesRefused("refused", "held"),
		bufferedLanded("held", "after"),
		driftUnchanged("guarded usage exact through the refusal", "before", "after"),
	},
	Cleanup: "resume producer\nstart " + victim + "\nstart " + third,
}

var keyOrdering = Scenario{
	Name:       "key-ordering",
	Title:      "Cluster: same key, same partition, order kept",
	Summary:    "the key decides the partition; a leader failover keeps every sensor's order",
	Brokers:    clusterBrokers,
	UsageMode:  "guarded",
	UsageReset: "latest",
	Baseline:   true,
	Article: "The producer picks a partition from the key (the hash of the sensor id modulo the partition " +
		"count), so every message of a sensor goes to the same partition, and a partition is a strictly " +
		"ordered log. Order holds per key, not across the topic. A leader failover does not change it: " +
		"the new leader has every acknowledged record, and the idempotent producer's retries are not " +
		"written twice.",
	Steps: []Step{
		{
			Title: "Keys and partitions",
			Say:   "Each sensor id hashes to one partition: the partitions view lists which sensors land where.",
			Watch: "Press t: the sensors of p0, p1 and p2 (t again closes).",
			Until: clusterReady, Stable: time.Second, Timeout: 3 * time.Minute,
			Tell: func(o Observation) string {
				parts := make([]string, 0, len(o.Parts.Rows))
				for _, r := range o.Parts.Rows {
					parts = append(parts, fmt.Sprintf("p%d %v", r.Partition, r.Sensors))
				}
				return strings.Join(parts, ", ")
			},
			Mark: "before",
		},
		{
			Title: "Fail a leader over",
			Say:   "Crash broker-2 while the producer publishes: a partition changes leader under its writes.",
			Watch: "The leader change on the watch line (\"partition N leader 2 → M\").",
			Event: "leader 2 →",
			Press: &Press{Action: action.Crash, Process: victim},
			Hold:  3 * time.Second,
			Until: leadersMovedOff(2), Timeout: failoverTimeout,
			Tell: tellMovedOff(2),
			Mark: "moved",
		},
		restartUntilWhole(victim, "Back, and read the topic",
			"Restart broker-2. Then the audit reads the whole topic: where each sensor's records are, and whether any came out of order.",
			"t: \"each in its key's partition, in order\" on the keys line; the checks say the same."),
	},
	Checks: []Check{
		keysPlaced("after"),
		orderKept("before", "after"),
		matchesAudit("after"),
	},
	Cleanup: "resume producer\nstart " + victim,
}

// restartUntilWhole is the step that restarts broker and, once every
// partition's ISR is whole again, measures the "after" mark.
func restartUntilWhole(broker, title, say, watch string) Step {
	return Step{
		Title: title,
		Say:   say,
		Watch: watch,
		Press: &Press{Action: action.Restart, Process: broker},
		Until: wholeAgain, Timeout: 2 * time.Minute,
		Then: measure,
		Mark: "after",
	}
}
