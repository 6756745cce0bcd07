package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// The checks are pure functions of marks: each is tested with a mark that
// confirms the lesson and one that contradicts it.

func obs(sec float64, procs ...board.ProcView) Observation {
	o := Observation{At: t0.Add(time.Duration(sec * float64(time.Second))), Procs: map[string]board.ProcView{}}
	for _, p := range procs {
		o.Procs[p.Name] = p
	}
	return o
}

func sensorRows(ts ...int64) []board.SensorRow {
	var rows []board.SensorRow
	for i, t := range ts {
		rows = append(rows, board.SensorRow{SensorState: board.SensorState{
			SensorID: "sensor-0" + string(rune('1'+i)), Timestamp: t, HoursTot: float64(t) / 10, KmTot: float64(t) / 5}, Truth: board.TruthMatch})
	}
	return rows
}

// withDrift returns o with usage rows whose drifts are the given cents
// (hours, km per sensor).
func withDrift(o Observation, cents ...[2]int64) Observation {
	o.Usage.Status = board.Live
	var tot board.Drift
	for i, c := range cents {
		d := board.Drift{HoursCents: c[0], KmCents: c[1]}
		tot.HoursCents += c[0]
		tot.KmCents += c[1]
		o.Usage.Rows = append(o.Usage.Rows, board.UsageRow{SensorID: "sensor-0" + string(rune('1'+i)), Drift: &d,
			Recorded: &board.UsageTotals{Records: 10}, Expected: &board.Amount{}})
	}
	o.Usage.Total = board.UsageRow{SensorID: "total", Drift: &tot, Recorded: &board.UsageTotals{Records: int64(10 * len(cents))}}
	return o
}

func eval(c Check, m Marks) (bool, string) { return c.Eval(m) }

func TestReplayWatchable(t *testing.T) {
	c := replayWatchable("after", 2*time.Second)
	cur := board.ProcView{Name: board.Current, Alive: true, GroupID: "demo-current-1", Current: &board.CurrentView{CaughtUp: true, CaughtUpMessages: 1234567, CaughtUpMillis: 2600, ReplayShown: 2300 * time.Millisecond}}
	ok, got := eval(c, Marks{"after": obs(0, cur)})
	if !ok || got != "rebuilt 1,234,567 messages in 2.6 s in group demo-current-1; replaying on screen for 2.3 s" {
		t.Fatalf("watchable: %v %q", ok, got)
	}
	cur.Current.CaughtUpMessages, cur.Current.CaughtUpMillis, cur.Current.ReplayShown = 579, 100, 0
	if ok, got := eval(c, Marks{"after": obs(0, cur)}); ok {
		t.Fatalf("a replay never on screen passed: %q", got)
	}
	cur.Current.CaughtUpMillis, cur.Current.ReplayShown = 2100, 1900*time.Millisecond
	if ok, got := eval(c, Marks{"after": obs(0, cur)}); ok {
		t.Fatalf("1.9 s on screen passed: %q", got)
	}
}

func TestStateIdentical(t *testing.T) {
	cur := board.ProcView{Name: board.Current, Alive: true, Current: &board.CurrentView{CaughtUp: true, CaughtUpMillis: 1400}}
	before := obs(0, cur)
	before.Sensors.Rows = sensorRows(100, 200, 300)
	after := obs(5, cur)
	after.Sensors.Rows = sensorRows(100, 200, 300)
	c := stateIdentical("before", "after")
	ok, got := eval(c, Marks{"before": before, "after": after})
	if !ok || got != "3/3 sensors identical (same message: timestamp, hours, km, position), rebuilt in 1.4 s" {
		t.Fatalf("identical: %v %q", ok, got)
	}
	after.Sensors.Rows = sensorRows(100, 250, 300)
	ok, got = eval(c, Marks{"before": before, "after": after})
	if ok || !strings.Contains(got, "2/3 sensors identical") || !strings.Contains(got, "sensor-02: ts 200") {
		t.Fatalf("one differs: %v %q", ok, got)
	}
	after.Sensors.Rows = sensorRows(100, 200)
	if ok, got = eval(c, Marks{"before": before, "after": after}); ok || !strings.Contains(got, "1 sensors missing") {
		t.Fatalf("one missing: %v %q", ok, got)
	}
}

func TestReplayedWholeTopic(t *testing.T) {
	before := obs(0, board.ProcView{Name: board.Current, GroupID: "demo-current-aaaa"})
	before.HWM = map[int32]int64{0: 40, 1: 40, 2: 40}
	after := obs(5, board.ProcView{Name: board.Current, GroupID: "demo-current-bbbb", Current: &board.CurrentView{CaughtUpMessages: 120, CaughtUpMillis: 300}})
	c := replayedWholeTopic("before", "after")
	if ok, got := eval(c, Marks{"before": before, "after": after}); !ok ||
		got != "read 120 messages (the topic holds 120) in 0.3 s; group demo-current-aaaa → demo-current-bbbb" {
		t.Fatalf("whole topic: %v %q", ok, got)
	}
	after.Procs[board.Current] = board.ProcView{Name: board.Current, GroupID: "demo-current-bbbb", Current: &board.CurrentView{CaughtUpMessages: 30}}
	if ok, _ := eval(c, Marks{"before": before, "after": after}); ok {
		t.Fatal("passed after reading a quarter of the topic")
	}
	after.Procs[board.Current] = board.ProcView{Name: board.Current, GroupID: "demo-current-aaaa", Current: &board.CurrentView{CaughtUpMessages: 120}}
	if ok, _ := eval(c, Marks{"before": before, "after": after}); ok {
		t.Fatal("passed with the same group")
	}
}

func TestLagGrewWhileDead(t *testing.T) {
	usage := func(lag int64, alive bool) board.ProcView {
		return board.ProcView{Name: board.Usage, Alive: alive, Lag: board.Lag{Applies: true, Messages: lag}}
	}
	crashed := obs(0, usage(5, false))
	crashed.Committed, crashed.HWM = map[int32]int64{0: 10, 1: 10}, map[int32]int64{0: 12, 1: 13}
	dead := obs(6, usage(65, false))
	dead.Committed, dead.HWM = map[int32]int64{0: 10, 1: 10}, map[int32]int64{0: 42, 1: 43}
	c := lagGrewWhileDead("crashed", "dead")
	ok, got := eval(c, Marks{"crashed": crashed, "dead": dead})
	if !ok || got != "lag 5 → 65 messages in 6s; committed offsets Σ20 → Σ20 while the log end moved Σ25 → Σ85" {
		t.Fatalf("grew: %v %q", ok, got)
	}
	dead.Committed = map[int32]int64{0: 30, 1: 10}
	if ok, _ := eval(c, Marks{"crashed": crashed, "dead": dead}); ok {
		t.Fatal("passed although the committed offsets moved while it was dead")
	}
}

func TestResumedFromCommitted(t *testing.T) {
	dead := obs(0, board.ProcView{Name: board.Usage})
	dead.Committed, dead.HWM, dead.CommitGroup = map[int32]int64{0: 10, 1: 20, 2: 30}, map[int32]int64{0: 50, 1: 50, 2: 50}, "demo-usage"
	resumed := func(positions ...int64) Observation {
		p := board.ProcView{Name: board.Usage, Alive: true, GroupID: "demo-usage", Processed: 6, Invalid: 1}
		for i, off := range positions {
			p.Positions = append(p.Positions, status.Position{Partition: int32(i), Offset: off})
		}
		return obs(3, p)
	}
	c := resumedFromCommitted("dead", "resumed")
	// From 10/20/30, 7 messages handled (one invalid).
	ok, got := eval(c, Marks{"dead": dead, "resumed": resumed(13, 22, 32)})
	if !ok || got != "started reading at Σ60, the offsets committed before the crash were Σ60 (the log end was Σ150)" {
		t.Fatalf("resumed: %v %q", ok, got)
	}
	// A jump to the end (latest without commits) skips what it missed.
	if ok, got := eval(c, Marks{"dead": dead, "resumed": resumed(53, 52, 52)}); ok {
		t.Fatalf("a jump to latest passed: %q", got)
	}
}

func TestDriftChecks(t *testing.T) {
	exact := withDrift(obs(0), [2]int64{0, 0}, [2]int64{0, 0})
	over := withDrift(obs(1), [2]int64{7, 17}, [2]int64{0, 0})
	lost := withDrift(obs(2), [2]int64{-5, -9}, [2]int64{0, 0})
	tests := []struct {
		check    Check
		from, to Observation
		ok       bool
		obs      string
	}{
		{overCounted("over", "a", "b"), exact, over, true, "total drift +0.00 h / +0.00 km → +0.07 h / +0.17 km (recorded − expected), over-counted on 1/2 sensors"},
		{overCounted("over", "a", "b"), exact, exact, false, ""},
		{overCounted("over", "a", "b"), exact, lost, false, ""},
		{driftUnchanged("same", "a", "b"), over, over, true, "total drift +0.07 h / +0.17 km → +0.07 h / +0.17 km; 2/2 sensors unchanged"},
		{driftUnchanged("same", "a", "b"), exact, exact, true, "total drift +0.00 h / +0.00 km → +0.00 h / +0.00 km, exact; 2/2 sensors unchanged"},
		{driftUnchanged("same", "a", "b"), exact, over, false, ""},
		{nothingLost("a", "b"), exact, over, true, "total drift +0.00 h / +0.00 km → +0.07 h / +0.17 km; lost usage on 0/2 sensors; over-counted on 1 (messages applied after the last auto-commit were applied again)"},
		{nothingLost("a", "b"), exact, lost, false, ""},
		{nothingLost("a", "b"), obs(0), exact, false, "no drift measured (usage or audit not available)"},
	}
	for i, tc := range tests {
		ok, got := eval(tc.check, Marks{"a": tc.from, "b": tc.to})
		if ok != tc.ok || (tc.obs != "" && got != tc.obs) {
			t.Errorf("%d %s: %v %q, want %v %q", i, tc.check.What, ok, got, tc.ok, tc.obs)
		}
	}
}

func TestHitWindow(t *testing.T) {
	before := obs(0, board.ProcView{Name: board.Usage, Alive: true, Usage: &board.UsageProcView{Mode: "naive"}})
	crashed := func(point string) Observation {
		return obs(2, board.ProcView{Name: board.Usage, LastExit: &board.Exit{Signal: "SIGKILL"},
			LastCrashPoint: &board.CrashPointHit{At: t0.Add(time.Second), Point: point, Partition: 2, Offset: 91}})
	}
	c := hitWindow("before", "crashed", "naive")
	ok, got := eval(c, Marks{"before": before, "crashed": crashed("after-delta")})
	if !ok || got != "after-delta reached at partition 2 offset 91, consumer-usage died by SIGKILL (mode naive)" {
		t.Fatalf("window: %v %q", ok, got)
	}
	if ok, _ := eval(c, Marks{"before": before, "crashed": crashed("after-checkpoint")}); ok {
		t.Fatal("after-checkpoint passed as the delta/checkpoint window")
	}
	stale := obs(0, board.ProcView{Name: board.Usage, LastExit: &board.Exit{Signal: "SIGKILL"},
		LastCrashPoint: &board.CrashPointHit{At: t0.Add(-time.Minute), Point: "after-delta"}})
	if ok, got := eval(c, Marks{"before": before, "crashed": stale}); ok || got != "no crash point reached since the step began" {
		t.Fatalf("an old crash point passed: %q", got)
	}
	// The previous crash point fired just before the step began: it is
	// not this step's.
	previous := &board.CrashPointHit{At: t0.Add(-time.Second / 2), Point: "after-delta", Partition: 1, Offset: 79}
	justBefore := obs(0, board.ProcView{Name: board.Usage, Alive: true, LastCrashPoint: previous, Usage: &board.UsageProcView{Mode: "naive"}})
	again := obs(2, board.ProcView{Name: board.Usage, LastExit: &board.Exit{Signal: "SIGKILL"}, LastCrashPoint: previous})
	if ok, got := eval(c, Marks{"before": justBefore, "crashed": again}); ok || got != "no crash point reached since the step began" {
		t.Fatalf("the previous crash point passed as this step's: %q", got)
	}
}

func TestStatelessChecks(t *testing.T) {
	down := obs(0, board.ProcView{Name: board.Query})
	down.Usage = board.UsageView{Status: board.Down, Reason: "consumer-query is crashed (SIGKILL): no answers until it is back",
		Rows: []board.UsageRow{{SensorID: "sensor-01", Expected: &board.Amount{HoursCents: 100}}}}
	if ok, got := eval(usageWentDark("down"), Marks{"down": down}); !ok || !strings.Contains(got, "0 recorded totals shown") {
		t.Fatalf("dark: %v %q", ok, got)
	}
	shown := down
	shown.Usage.Rows = []board.UsageRow{{SensorID: "sensor-01", Recorded: &board.UsageTotals{HoursCents: 100}}}
	if ok, _ := eval(usageWentDark("down"), Marks{"down": shown}); ok {
		t.Fatal("passed with totals on a dark panel")
	}

	before := withDrift(obs(0), [2]int64{0, 0})
	back := withDrift(obs(10, board.ProcView{Name: board.Query, Alive: true, StartedAt: t0.Add(9 * time.Second)}), [2]int64{0, 0}, [2]int64{0, 0})
	back.Usage.AsOf = t0.Add(9*time.Second + 800*time.Millisecond)
	ok, got := eval(answersAtOnce("before", "back"), Marks{"before": before, "back": back})
	if !ok || got != "first answer 800ms after the restart (the dashboard asks every second); records 10 before the crash → 20 now" {
		t.Fatalf("at once: %v %q", ok, got)
	}
	back.Usage.AsOf = t0.Add(20 * time.Second)
	if ok, _ := eval(answersAtOnce("before", "back"), Marks{"before": before, "back": back}); ok {
		t.Fatal("passed with an answer 11 s after the restart")
	}
}

func TestReplayedFromBeginning(t *testing.T) {
	prev := obs(0, board.ProcView{Name: board.Usage, GroupID: "demo-usage"})
	fresh := obs(3, board.ProcView{Name: board.Usage, GroupID: "demo-usage-earliest-1a2b3c4d",
		Processed: 90, Positions: []status.Position{{Partition: 0, Offset: 30}, {Partition: 1, Offset: 30}, {Partition: 2, Offset: 30}}, Usage: &board.UsageProcView{Mode: "guarded", Reset: "earliest"}})
	fresh.HWM = map[int32]int64{0: 30, 1: 30, 2: 30}
	c := replayedFromBeginning("prev", "fresh")
	ok, got := eval(c, Marks{"prev": prev, "fresh": fresh})
	if !ok || got != "guarded group demo-usage-earliest-1a2b3c4d (was demo-usage) started at offset Σ0 and read 90 messages (the topic holds 90)" {
		t.Fatalf("from the beginning: %v %q", ok, got)
	}
	resumed := fresh
	resumed.Procs = map[string]board.ProcView{board.Usage: {Name: board.Usage, Usage: &board.UsageProcView{Reset: "earliest"}, GroupID: "demo-usage-earliest-1a2b3c4d",
		Processed: 10, Positions: fresh.Procs[board.Usage].Positions}}
	if ok, _ := eval(c, Marks{"prev": prev, "fresh": resumed}); ok {
		t.Fatal("passed for a consumer that started at Σ80")
	}
}
