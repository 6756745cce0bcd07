package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The rebalance lesson (seed 004): consumer-usage A holds a usage write
// (its effect delay) when B joins the group; the coordinator revokes A's
// partitions and gives B partition movedPartition, B starts from the
// durable committed offset and replays the message, then A's write lands.

// movedPartition is the partition a second instance takes: librdkafka's
// range assignor orders static members by instance id (consumer-usage <
// consumer-usage-2) and gives the last of 3 partitions to the second.
const movedPartition = 2

// rebalanceDelay is A's effect delay: longer than B takes to start, join
// and replay (2-3 s here).
const rebalanceDelay = 10 * time.Second

var second = board.UsageInstance(2)

var (
	// heldOnMover: A holds a write of the partition B will take.
	heldOnMover = &Cond{
		What: fmt.Sprintf("consumer-usage holding a write of partition %d", movedPartition),
		Holds: func(o Observation) bool {
			_, ok := heldWrite(o.Proc(board.Usage))
			return ok
		},
	}
	// movedToSecond: B owns the partition, and A was revoked after it
	// began holding the write.
	movedToSecond = &Cond{
		What: fmt.Sprintf("%s assigned partition %d, consumer-usage revoked", second, movedPartition),
		Holds: func(o Observation) bool {
			a, b := o.Proc(board.Usage), o.Proc(second)
			h, ok := heldWrite(a)
			return ok && b.Alive && slices.Contains(b.Usage.Partitions, movedPartition) && b.Usage.LastAssign != nil &&
				a.Usage.LastRevoke != nil && a.Usage.LastRevoke.At.After(h.At)
		},
	}
	// lateLanded: A's held write of the partition completed after the
	// revoke.
	lateLanded = &Cond{
		What: fmt.Sprintf("consumer-usage's held write of partition %d completing, late", movedPartition),
		Holds: func(o Observation) bool {
			a := o.Proc(board.Usage)
			l, ok := onMover(a.Usage.LateWrites)
			return ok && a.Usage.LastRevoke != nil && !l.At.Before(a.Usage.LastRevoke.At)
		},
	}
)

// heldWrite is A's held write of movedPartition.
func heldWrite(a board.ProcView) (board.Write, bool) { return onMover(a.Usage.Held) }

func onMover(ws []board.Write) (board.Write, bool) {
	for _, w := range ws {
		if w.Partition == movedPartition {
			return w, true
		}
	}
	return board.Write{}, false
}

func tellHeld(o Observation) string {
	h, _ := heldWrite(o.Proc(board.Usage))
	return fmt.Sprintf("consumer-usage holds its write of %s for %s: in flight", span(h), o.Proc(board.Usage).Usage.EffectDelay)
}

func tellMoved(o Observation) string {
	a, b := o.Proc(board.Usage), o.Proc(second)
	return fmt.Sprintf("consumer-usage revoked %v at generation %d with %s in flight; %s assigned %v at generation %d, "+
		"starting p%d at offset %d (the committed offset), %.2f s after the revoke",
		a.Usage.LastRevoke.Partitions, a.Usage.LastRevoke.Generation, board.Plural(a.Usage.LastRevoke.InFlight, "message"), second, b.Usage.LastAssign.Partitions,
		b.Usage.LastAssign.Generation, movedPartition, b.Usage.LastAssign.Start[movedPartition], handover(a, b).Seconds())
}

// handover is the rebalance as the partition saw it: from the old
// owner's revoke to the new owner's assignment.
func handover(a, b board.ProcView) time.Duration {
	if a.Usage.LastRevoke == nil || b.Usage.LastAssign == nil {
		return 0
	}
	return b.Usage.LastAssign.At.Sub(a.Usage.LastRevoke.At)
}

func tellLate(o Observation) string {
	l, _ := onMover(o.Proc(board.Usage).Usage.LateWrites)
	return fmt.Sprintf("consumer-usage's write of %s landed late: %d of %d refused as second effects (%s had recorded them)",
		span(l), l.Refused, l.Count, second)
}

func span(w board.Write) string {
	if w.Count > 1 {
		return fmt.Sprintf("p%d@%d..%d", w.Partition, w.Offset, w.Offset+w.Count-1)
	}
	return fmt.Sprintf("p%d@%d", w.Partition, w.Offset)
}

// inFlightAtRevoke: the write was in flight when A's partitions were
// revoked, and B started the partition at or before it.
func inFlightAtRevoke(moved string) Check {
	return Check{
		What:  "a write was in flight at the revoke, and the new owner started at or before it",
		Needs: []string{moved},
		Eval: func(m Marks) (bool, string) {
			// The write held when the revoke came: A's latest of the
			// partition as of the move (a presenter may take a while to
			// press +, and A moves on meanwhile).
			h, ok := heldWrite(m[moved].Proc(board.Usage))
			a, b := m[moved].Proc(board.Usage), m[moved].Proc(second)
			if !ok || a.Usage.LastRevoke == nil || b.Usage.LastAssign == nil {
				return false, "no held write, revoke or assignment seen"
			}
			start, has := b.Usage.LastAssign.Start[movedPartition]
			obs := fmt.Sprintf("held %s; revoke with %s in flight; %s started p%d at %d", span(h),
				board.Plural(a.Usage.LastRevoke.InFlight, "message"), second, movedPartition, start)
			return a.Usage.LastRevoke.InFlight > 0 && has && start <= h.Offset, obs
		},
	}
}

// lateRefused: A's write completed after the revoke and the store refused
// every record of it that B had made (guarded: one effect per message).
func lateRefused(late string) Check {
	return Check{
		What:  "the old owner's late write was refused as second effects",
		Needs: []string{late},
		Eval: func(m Marks) (bool, string) {
			a := m[late].Proc(board.Usage)
			l, ok := onMover(a.Usage.LateWrites)
			if !ok {
				return false, fmt.Sprintf("no late write of partition %d seen", movedPartition)
			}
			obs := fmt.Sprintf("late write %s, %d of %d refused; consumer-usage late %d, prevented %d in all",
				span(l), l.Refused, l.Count, a.Usage.Late, a.Usage.Prevented)
			return l.Refused == l.Count && l.Count > 0, obs
		},
	}
}

// rebalanceTook reports the rebalance's duration as the instances saw it.
func rebalanceTook(moved string) Check {
	return Check{
		What:  "rebalance time (static membership)",
		Needs: []string{moved},
		Eval: func(m Marks) (bool, string) {
			a, b := m[moved].Proc(board.Usage), m[moved].Proc(second)
			if a.Usage.LastRevoke == nil || b.Usage.LastAssign == nil {
				return false, "no revoke or assignment seen"
			}
			return true, fmt.Sprintf("partition %d moved %.2f s after the revoke (generation %d → %d), static members; "+
				"dynamic membership: scripts/bench-rebalance.sh", movedPartition, handover(a, b).Seconds(),
				a.Usage.LastRevoke.Generation, b.Usage.LastAssign.Generation)
		},
	}
}

var rebalanceInFlight = Scenario{
	Name:       "rebalance-in-flight",
	Title:      "Rebalance with a write in flight",
	Summary:    "B joins while A holds a write in flight: A's late write is refused, one effect per message",
	UsageMode:  "guarded",
	UsageReset: "latest",
	Baseline:   true,
	Article: "A rebalance moves a partition while the old owner's database write is still in flight: " +
		"the group takes the partition away, it cannot take the request back. The new owner starts from the " +
		"durable committed offset and replays the message; the old request may still finish. Group " +
		"ownership protects who reads, not what the database accepts: each effect needs a durable " +
		"identity so the second one is refused, and an offset is committed only for a completed prefix.",
	Steps: []Step{
		{
			Title: "One owner",
			Say: "One consumer-usage, guarded, owns the three partitions of sensor-data. The dashboard pauses the " +
				"producer a moment to measure the drift exactly.",
			Watch: "One consumer-usage row, mode guarded in the line under the table; the total row exact.",
			Do:    "scale consumer-usage 1",
			Until: stackReady, Stable: time.Second,
			Then: measure,
			Mark: "before",
		},
		{
			Title: "A write in flight",
			Say: fmt.Sprintf("Publishing again. consumer-usage (A) now holds every usage write %s before it reaches "+
				"the store: a slow database request, sent and not yet applied.", rebalanceDelay),
			Watch: fmt.Sprintf("\"write p%d@N held\" on the watch line: that write is in flight.", movedPartition),
			Event: " held ",
			Do:    fmt.Sprintf("effect-delay consumer-usage %s\nresume producer", rebalanceDelay),
			Until: heldOnMover,
			Tell:  tellHeld,
			Mark:  "held",
		},
		{
			Title: "B joins: revoke, assign",
			Say: fmt.Sprintf("A second instance (B) joins the group. The coordinator revokes A's partitions and gives "+
				"partition %d to B, which starts from the committed offset: A committed only what it completed.", movedPartition),
			Watch: fmt.Sprintf("consumer-usage-2's row appears with p[%d] in its strategy cell (consumer-usage's says p[] "+
				"until it holds the others again); the watch line: consumer-usage-2 assigned [%d] with its generation.",
				movedPartition, movedPartition),
			Event: fmt.Sprintf("assigned [%d]", movedPartition),
			Press: &Press{Action: action.ScaleUp, Process: board.Usage},
			Until: movedToSecond,
			Tell:  tellMoved,
			Mark:  "moved",
		},
		{
			Title: "B replays, A's write lands",
			Say: "B replays the message and records its effect. Then A's request reaches the store: same " +
				"message, same identity, refused.",
			Watch: fmt.Sprintf("\"late write p%d@N (…, refused as a second effect)\" on the watch line.", movedPartition),
			Event: "refused as a second effect",
			Until: lateLanded, Timeout: rebalanceDelay + 30*time.Second,
			Tell: tellLate,
			Mark: "late",
		},
		{
			Title: "Measure",
			Say:   "A's delay off; a pause to compare every sensor with the topic.",
			Watch: "The total row: exact.",
			Do:    "effect-delay consumer-usage 0",
			Until: stackReady, Stable: time.Second,
			Then: measure,
			Mark: "after",
		},
		{
			Title: "Publishing again",
			Say: "Ownership decides who reads; identities decide what the database accepts. Two instances " +
				"keep running: - scales back to one.",
			Do: "resume producer",
		},
	},
	Checks: []Check{
		inFlightAtRevoke("moved"),
		lateRefused("late"),
		driftUnchanged("one effect per message: drift unchanged", "before", "after"),
		rebalanceTook("moved"),
	},
	Cleanup: "effect-delay consumer-usage 0\nresume producer",
}
