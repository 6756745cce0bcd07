package scenario

import (
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// costObs is a mark of a rebuild-cost measure: consumer-current rebuilt
// with run, its state matching the audit or not.
func costObs(run board.RebuildRun, match bool) Observation {
	run.Done = true
	o := obs(0, board.ProcView{Name: board.Current, Alive: true, Current: &board.CurrentView{CaughtUp: true, LastRebuild: &run}})
	o.Sensors.Status = board.Live
	o.Sensors.Rows = sensorRows(1, 2)
	if !match {
		o.Sensors.Rows[1].Truth = board.TruthDiffers
	}
	return o
}

func TestCostChecks(t *testing.T) {
	const big = 1_000_000
	good := Marks{}
	for _, n := range costSteps {
		good[costMark(lesson.Replay, n)] = costObs(board.RebuildRun{Strategy: "replay", TopicRead: n, Millis: n / 300, History: n}, true)
		good[costMark(lesson.Snapshot, n)] = costObs(board.RebuildRun{Strategy: "snapshot", TopicRead: 12, Millis: 60, History: n}, true)
		good[costMark(lesson.Changelog, n)] = costObs(board.RebuildRun{Strategy: "changelog", ChangelogRead: 11, TopicRead: 3, Millis: 70, History: n}, true)
	}
	for _, c := range costChecks() {
		if ok, o := c.Eval(good); !ok {
			t.Errorf("%s: failed on good figures: %s", c.What, o)
		}
	}
	bad := func(change func(Marks)) Marks {
		m := Marks{}
		for k, v := range good {
			m[k] = v
		}
		change(m)
		return m
	}
	for what, m := range map[string]Marks{
		"every rebuild": bad(func(m Marks) {
			m[costMark(lesson.Snapshot, 10_000)] = costObs(board.RebuildRun{Strategy: "snapshot", FellBack: "no snapshot written yet", TopicRead: 10_000, History: 10_000}, true)
		}),
		"snapshot at 1,000,000 messages reads": bad(func(m Marks) {
			m[costMark(lesson.Snapshot, big)] = costObs(board.RebuildRun{Strategy: "snapshot", TopicRead: 60_000, Millis: 60, History: big}, true)
		}),
		"changelog at 1,000,000 messages takes": bad(func(m Marks) {
			m[costMark(lesson.Changelog, big)] = costObs(board.RebuildRun{Strategy: "changelog", ChangelogRead: 11, Millis: 700, History: big}, true)
		}),
		"a replay's time grows": bad(func(m Marks) {
			m[costMark(lesson.Replay, big)] = costObs(board.RebuildRun{Strategy: "replay", TopicRead: big, Millis: 10, History: big}, true)
		}),
	} {
		failed := false
		for _, c := range costChecks() {
			if strings.HasPrefix(c.What, what) {
				ok, _ := c.Eval(m)
				failed = !ok
			}
		}
		if !failed {
			t.Errorf("%s: passed on bad figures", what)
		}
	}
	// A state that differs from the audit fails the first check.
	m := bad(func(m Marks) {
		m[costMark(lesson.Changelog, big)] = costObs(board.RebuildRun{Strategy: "changelog", History: big}, false)
	})
	if ok, o := costChecks()[0].Eval(m); ok || !strings.Contains(o, "differs from the audit") {
		t.Errorf("a state unlike the audit's: %v %s", ok, o)
	}
	// The time bound is a fifth of the replay's, or 300 ms.
	fast := bad(func(m Marks) {
		m[costMark(lesson.Replay, big)] = costObs(board.RebuildRun{Strategy: "replay", TopicRead: big, Millis: 1000, History: big}, true)
		m[costMark(lesson.Snapshot, big)] = costObs(board.RebuildRun{Strategy: "snapshot", Millis: 290, History: big}, true)
	})
	if ok, o := remedyTime(lesson.Snapshot, big).Eval(fast); !ok {
		t.Errorf("290 ms against a 1 s replay is under the 300 ms floor: %s", o)
	}
}
