package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The retention lesson (seed 002: "to delete old data Kafka removes the
// oldest segment files"): a replay from earliest is only as complete as
// the topic. A sensor that stopped publishing has its last message deleted
// like every other old one; the changelog keeps its last reading, the
// replay forgets it. And consumer-usage stopped past the log start never
// counts what was deleted before it read it.

// lessonRetention is the retention the lesson gives the topic: short, so
// each wait is seconds.
const lessonRetention = 10 * time.Second

// parkedSensor is the sensor the lesson parks: the first the partitions
// place ("" before the metadata is read).
func parkedSensor(o Observation) string {
	if ids := sensorsOf(o); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// lastDeleted: the audit's last message of the parked sensor is below its
// partition's log start, and where it was.
func lastDeleted(o Observation) (board.SensorState, bool) {
	t, ok := o.Keys[parkedSensor(o)]
	if !ok || t.Last == nil {
		return board.SensorState{}, false
	}
	for _, r := range o.Parts.Rows {
		if r.Partition == t.Last.Partition {
			return *t.Last, r.LogStart > t.Last.Offset
		}
	}
	return *t.Last, false
}

var (
	// retentionOn: the topic has the lesson's short retention and the
	// stack is steady.
	retentionOn = &Cond{
		What:  "the topic's retention short, every process running and caught up",
		Holds: func(o Observation) bool { return o.Parts.Retention > 0 && stackReady.Holds(o) },
	}
	// parkedGone: retention deleted the parked sensor's last message.
	parkedGone = &Cond{
		What: "the parked sensor's last message deleted by retention",
		Holds: func(o Observation) bool {
			_, gone := lastDeleted(o)
			return gone
		},
	}
	// deletedPastUsage: a log start is past consumer-usage's commits.
	deletedPastUsage = &Cond{
		What: "consumer-usage stopped, a log start past its group's commits",
		Holds: func(o Observation) bool {
			if o.Proc(board.Usage).Alive || o.HWMStale {
				return false
			}
			for _, r := range o.Parts.Rows {
				if c, ok := o.Committed[r.Partition]; ok && c >= 0 && r.LogStart > c {
					return true
				}
			}
			return false
		},
	}
)

var retention = Scenario{
	Name:       "retention",
	Title:      "Retention: what Kafka itself deletes",
	Summary:    "a parked sensor deleted: changelog keeps it, replay forgets it; usage skips the deleted",
	UsageMode:  "naive",
	UsageReset: "latest",
	Rebuild:    "changelog",
	Article: "To delete old data Kafka removes the oldest segment files, whatever was read. A replay from " +
		"earliest rebuilds only what the topic still holds: a machine that stopped publishing has its last " +
		"message deleted like any other, and disappears from the state after the next crash, although " +
		"nothing failed. A compacted changelog keeps every key's last value. A consumer whose committed " +
		"offset falls before the log start gets OFFSET_OUT_OF_RANGE and, with latest, jumps to the end.",
	Steps: []Step{
		{
			Title: "A short retention",
			Say: fmt.Sprintf("The topic keeps its records %s, in small segments: Kafka deletes older ones, "+
				"whatever was read. It cannot be undone: what is deleted is gone (T asks before it sets it).",
				lessonRetention),
			Watch: "The events name the offsets deleted; t shows start, each partition's log start, moving forward.",
			Event: "deleted by retention",
			Do:    "retention " + lessonRetention.String(),
			Until: retentionOn, Stable: time.Second, Timeout: 2 * time.Minute,
		},
		{
			Title: "A machine stops",
			Say: "The producer parks one sensor: it publishes nothing more, and its last message stays its " +
				"latest, until retention deletes it like every other old one. consumer-current rebuilds " +
				"from its changelog, a compacted topic of each sensor's last state.",
			Watch: "The events: the producer parks the sensor; the sensors panel still shows it, same as the audit.",
			Event: "parks",
			From: func(o Observation) (string, string, error) {
				if id := parkedSensor(o); id != "" {
					return "park " + id, "", nil
				}
				return "", "", fmt.Errorf("no sensor placed yet")
			},
			Until: parkedGone, Timeout: time.Minute,
			Tell: tellParked,
			Mark: "parked",
		},
		{
			Title: "Crash consumer-current",
			Say:   "A SIGKILL: its state lived in memory.",
			Watch: "The process row turns red; the sensors panel says DOWN and STALE.",
			Press: &Press{Action: action.Crash, Process: board.Current},
			Until: currentDown,
		},
		{
			Title: "The changelog keeps it",
			Say: "It restarts from its changelog, then reads what follows in the topic: the parked sensor's " +
				"last state is in the changelog, though the topic deleted its message.",
			Watch: "The sensors panel: LIVE, the parked sensor still there, nothing forgotten.",
			Press: &Press{Action: action.Restart, Process: board.Current},
			Until: currentRebuilt, Stable: 1500 * time.Millisecond,
			Mark: "changelog",
		},
		{
			Title: "A replay forgets it",
			Say: "Now the replay strategy: a fresh group from earliest, the topic alone. The parked sensor's " +
				"last message is gone, so the replay cannot rebuild it.",
			Watch: "The sensors panel names the sensor forgotten, with its last message and when it was deleted.",
			Event: "cannot rebuild",
			Do:    "rebuild replay\ncrash " + board.Current + "\nstart " + board.Current,
			Until: currentRebuilt, Stable: 1500 * time.Millisecond,
			Tell: tellForgotten,
			Mark: "replay",
		},
		{
			Title: "consumer-usage stops",
			Say: "consumer-usage stops; its group keeps its commits while retention deletes past them. " +
				"Restarted, its fetch is OFFSET_OUT_OF_RANGE, and latest sends it to the end: what was " +
				"deleted, and what came after, is never read. The audit read it all before.",
			Watch: "consumer-usage stopped; in t its committed offsets fall behind each partition's start.",
			Do:    "stop " + board.Usage,
			Until: deletedPastUsage, Timeout: time.Minute,
		},
		{
			Title: "What it never counted",
			Say: "Paused, every number compares exactly: the messages deleted before it read them are " +
				"deleted-by-retention, those the reset jumped over never counted; naive's next reading takes its " +
				"delta from its checkpoint, a stale reading that spans them all.",
			Watch: "The usage panel and w: each message named, and what the stale deltas made of the total.",
			Do:    "start " + board.Usage,
			Until: usageResumed, Stable: 500 * time.Millisecond, Timeout: 2 * time.Minute,
			Then: measure,
		},
		{
			Title: "Named",
			Say:   "Each message it never read is named, and the drift adds up to them to the cent.",
			Watch: "w: deleted-by-retention, never counted (an offset reset), stale-reading.",
			Hold:  3 * time.Second,
			Until: causesNamed, Timeout: 2 * time.Minute,
			Mark: "skipped",
		},
	},
	Checks: []Check{
		keptByTheChangelog("parked", "changelog"),
		forgottenByTheReplay("replay"),
		deletedUnreadNamed("skipped"),
	},
	Cleanup: "resume producer\npark none\nstart " + board.Current + "\nstart " + board.Usage,
}

// tellParked: the parked sensor's last message, and that it is deleted.
func tellParked(o Observation) string {
	last, _ := lastDeleted(o)
	return fmt.Sprintf("%s parked: its last message p%d@%d deleted by retention", parkedSensor(o), last.Partition, last.Offset)
}

// tellForgotten: the sensors the replay could not rebuild.
func tellForgotten(o Observation) string {
	var out []string
	for _, f := range o.Sensors.Forgotten {
		out = append(out, f.Words())
	}
	if len(out) == 0 {
		return "the replay forgot no sensor"
	}
	return "forgotten by the replay: " + strings.Join(out, "; ")
}

// keptByTheChangelog: after a rebuild from the changelog, consumer-current
// holds the parked sensor's last reading, the one the topic deleted.
func keptByTheChangelog(parked, mark string) Check {
	return Check{
		What:  "changelog: the parked sensor kept, its last message deleted from the topic",
		Needs: []string{parked, mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			id := parkedSensor(m[parked])
			last, gone := lastDeleted(m[parked])
			i := slices.IndexFunc(o.Sensors.Rows, func(r board.SensorRow) bool { return r.SensorID == id })
			if i < 0 {
				return false, fmt.Sprintf("%s not held after the rebuild from the changelog", id)
			}
			r := o.Sensors.Rows[i]
			kept := r.Timestamp == last.Timestamp && r.Partition == last.Partition && r.Offset == last.Offset
			return gone && kept && len(o.Sensors.Forgotten) == 0,
				fmt.Sprintf("%s held at p%d@%d (its last message p%d@%d, deleted: %v); %d forgotten",
					id, r.Partition, r.Offset, last.Partition, last.Offset, gone, len(o.Sensors.Forgotten))
		},
	}
}

// forgottenByTheReplay: after a replay from earliest, the parked sensor
// alone is forgotten, its last message below its partition's log start.
func forgottenByTheReplay(mark string) Check {
	return Check{
		What:  "replay: the parked sensor alone forgotten, its last message deleted",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			id := parkedSensor(o)
			f := o.Sensors.Forgotten
			held := slices.ContainsFunc(o.Sensors.Rows, func(r board.SensorRow) bool { return r.SensorID == id })
			if len(f) != 1 || f[0].SensorID != id || held {
				return false, fmt.Sprintf("forgotten %v, %s held %v", f, id, held)
			}
			last, gone := lastDeleted(o)
			return gone && f[0].Partition == last.Partition && f[0].Offset == last.Offset, f[0].Words()
		},
	}
}

// deletedUnreadNamed: consumer-usage's drift is named message by message (the
// step waited for causesNamed), among them messages deleted before it read
// them. Naive's next delta, taken from its checkpoint, may span them: the
// total can come out exact while no skipped message was read.
func deletedUnreadNamed(mark string) Check {
	return Check{
		What:  "usage: the messages deleted before consumer-usage read them named, every drift adding up",
		Needs: []string{mark},
		Eval: func(m Marks) (bool, string) {
			o := m[mark]
			n := map[string]int{}
			for _, r := range o.Usage.Rows {
				for _, c := range r.Causes {
					n[c.Kind]++
				}
			}
			d, ok := o.totalDrift()
			return ok && causesNamed.Holds(o) && n[board.CauseDeletedUnread] > 0,
				fmt.Sprintf("%d deleted-by-retention, %d never-recorded, %d stale-reading; total drift %+.2f h",
					n[board.CauseDeletedUnread], n[board.CauseNeverRecorded], n[board.CauseStaleReading], d.Hours())
		},
	}
}
