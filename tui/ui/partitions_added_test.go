package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

func (f *fakeController) AddPartitions(total int) error {
	return f.record(fmt.Sprintf("add-partitions %d", total))
}

// P asks before it grows the topic (a topic cannot shrink): y grows it by
// one partition, any other key cancels and does nothing else.
func TestAddPartitionAsksFirst(t *testing.T) {
	ctl := &fakeController{}
	m := newModel(sceneRunning(), ctl)
	m = press(t, m, "P")
	if v := m.View(); !strings.Contains(v, "grow sensor-data from 3 to 4 partitions? A topic cannot shrink: keys move for good. y: grow · any other key: cancel") {
		t.Fatalf("P does not ask:\n%s", v)
	}
	if len(ctl.Calls()) != 0 {
		t.Fatalf("P acted before y: %q", ctl.Calls())
	}
	m = press(t, m, "3") // cancels the question, selects nothing
	m = press(t, m, "x")
	if got := ctl.Calls(); !slices.Equal(got, []string{"crash producer"}) {
		t.Fatalf("after a cancelled P: calls %q", got)
	}
	m = press(t, m, "P")
	m = press(t, m, "x")
	if got := ctl.Calls(); len(got) != 1 {
		t.Fatalf("x answered the question and acted: %q", got)
	}
	if v := m.View(); !strings.Contains(v, "P cancelled: sensor-data keeps its 3 partitions") {
		t.Fatalf("no cancel note:\n%s", v)
	}
	m = press(t, m, "P")
	m = press(t, m, "y")
	if got := ctl.Calls(); !slices.Equal(got[1:], []string{"add-partitions 4"}) {
		t.Fatalf("y: calls %q", got)
	}
	if v := m.View(); !strings.Contains(v, "sensor-data has 4 partitions") {
		t.Fatalf("no answer in the status line:\n%s", v)
	}
	// At 80 columns the short question still says what y does.
	m, _ = m.Update(keyMsg("P"))
	small := New(sceneRunning().b, ctl, Options{})
	small.width, small.height, small.confirm = 80, 24, m.(Model).confirm
	if v := small.View(); !strings.Contains(v, "grow sensor-data to 4 partitions for good? y: grow · other key: cancel") {
		t.Fatalf("80 columns:\n%s", v)
	}
}

// scenePartitionsAdded: sceneRunning, then the topic grew to 4 partitions
// at 64.5 s: the audit read the seven moved keys in their new partitions;
// consumer-current replayed and holds older readings of sensor-01 and
// sensor-04 (read from their old partitions after their newer ones);
// consumer-usage over-counted sensor-04 from a stale reading.
func scenePartitionsAdded() *scene {
	s := sceneRunning()
	var planned []board.PlannedMove
	for i := range nSensors {
		id := sensorID(i)
		if from, to := kafkacfg.PartitionFor(id, 3), kafkacfg.PartitionFor(id, 4); from != to {
			planned = append(planned, board.PlannedMove{Sensor: id, From: from, To: to})
		}
	}
	s.apply(board.PartitionsAdded{At: at(64.5), Topic: "sensor-data", From: 3, To: 4, Moves: planned, Sensors: nSensors})
	s.status(board.Current, 65.4, status.Event{Type: status.Revoked, Partitions: []int32{0, 1, 2}})
	s.status(board.Current, 65.4, status.Event{Type: status.Assigned, Partitions: []int32{0, 1, 2, 3}})
	one := []int32{0}
	grown := board.Partitions{At: at(65), Topic: "sensor-data", MinISR: 1,
		Rows: []board.PartitionMeta{pmeta(0, 0, one, one), pmeta(1, 0, one, one), pmeta(2, 0, one, one), pmeta(3, 0, one, one)}}
	for i := range nSensors {
		p := kafkacfg.PartitionFor(sensorID(i), 4)
		grown.Rows[p].Sensors = append(grown.Rows[p].Sensors, sensorID(i))
	}
	s.tick(65)
	s.apply(grown)
	total := int64(64 * nSensors)
	written := map[int32]int64{0: hwm(total)[0] + 9, 1: hwm(total)[1] + 3, 2: hwm(total)[2] + 6, 3: 9}
	s.apply(board.Offsets{At: at(65.5), HighWatermarks: written})
	s.apply(board.Committed{At: at(65.5), Group: "demo-usage", Offsets: written})
	var moves []board.KeyMove
	truth := truthAt(63, 66)
	for _, m := range planned {
		mv := board.KeyMove{Sensor: m.Sensor, From: m.From, To: m.To, LastOffset: hwm(total)[m.From] - 3, FirstOffset: int64(len(moves) % 3),
			FirstTimestamp: at(64.8).UnixMilli()}
		moves = append(moves, mv)
		for j := range truth {
			if truth[j].SensorID == m.Sensor {
				truth[j].Partitions = []int32{min(m.From, m.To), max(m.From, m.To)}
				truth[j].Last.Partition, truth[j].Last.Offset = m.To, mv.FirstOffset+6
			}
		}
	}
	s.tick(66)
	s.apply(board.TruthSnapshot{At: at(66), AuditOffset: total + 27, Sensors: truth, Moves: moves,
		AuditThrough: map[int32]int64{0: written[0], 1: written[1], 2: written[2], 3: written[3]}})
	state := sensorsAt(63, 66)
	for _, i := range []int{0, 3} { // sensor-01 and sensor-04: an older reading, from the old partition
		state[i] = sensorAt(i, 61, 64)
	}
	for i := range state {
		for _, tr := range truth {
			if tr.SensorID == state[i].SensorID && i != 0 && i != 3 {
				state[i].Partition, state[i].Offset = tr.Last.Partition, tr.Last.Offset
			}
		}
	}
	s.apply(board.SensorsSnapshot{At: at(66), CaughtUp: true, Sensors: state})
	usage := usageAt(63, func(i int) (float64, float64) {
		if i == 3 {
			return 54.56, 133.20
		}
		return 0, 0
	})
	usage[3].Causes = []board.Cause{{Kind: "stale-reading", Partition: 0, Offset: 2, Records: 1, Writer: "consumer-usage@10:01:05",
		RecordedHoursCents: 5469, RecordedKmCents: 13361, ExpectedHoursCents: 13, ExpectedKmCents: 41}}
	s.apply(board.UsageSnapshot{At: at(66), Sensors: usage})
	return s.tick(66.4)
}

// The topic grown to 4 partitions: the partitions lines mark the keys that
// moved in, the t view says when and where each moved; sensors and usage
// show what consumer-current and consumer-usage made of it.
func TestPartitionsAddedGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []tea.Msg
	}{
		{"grown", []tea.Msg{keyMsg("3")}},
		{"partitions_view", []tea.Msg{keyMsg("t")}},
		{"asking", []tea.Msg{keyMsg("P")}},
	} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				out := render(t, scenePartitionsAdded(), sz.w, sz.h, tc.msgs...)
				checkFrame(t, out, sz.w, sz.h)
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// TestPartitionsViewScrolls: at 120x36 the partitions view with four
// partitions does not fit; its title says which lines show, and ] brings
// the last sections (Keys, Acked) into view whole, never cut.
func TestPartitionsViewScrolls(t *testing.T) {
	top := render(t, scenePartitionsAdded(), 120, 36, keyMsg("t"))
	if !strings.Contains(top, "· lines 1-13 of 24 · [ ] scroll") || strings.Contains(top, "Acked") {
		t.Fatalf("no scroll hint, or Acked already shown:\n%s", top)
	}
	if strings.Contains(top, "read…") {
		t.Fatalf("a partition's line is cut:\n%s", top)
	}
	bottom := render(t, scenePartitionsAdded(), 120, 36, keyMsg("t"), keyMsg("]"), keyMsg("]"), keyMsg("]"), keyMsg("]"))
	for _, want := range []string{"lines 12-24 of 24", "Keys     10 sensors", "Acked "} {
		if !strings.Contains(bottom, want) {
			t.Fatalf("after ] the view lacks %q:\n%s", want, bottom)
		}
	}
}

// TestPartitionLinesUpTo6At120x36: at the designed size a presenter keeps
// a line per partition up to six, with consumer-usage scaled to three
// instances, while the events keep their least and the tables their
// status, header, total and the drifting rows; a seventh partition folds
// them onto one line.
func TestPartitionLinesUpTo6At120x36(t *testing.T) {
	for _, n := range []int32{4, 5, 6, 7} {
		s := sceneScaled()
		one := []int32{0}
		var metas []board.PartitionMeta
		for p := range n {
			metas = append(metas, pmeta(p, 0, one, one))
		}
		s.apply(partitionsOf(66, 1, metas...))
		out := render(t, s, 120, 36)
		checkFrame(t, out, 120, 36)
		perLine := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "  leader 0  replicas [0]") {
				perLine++
			}
		}
		switch {
		case n <= maxPartitionLines && perLine != int(n):
			t.Errorf("%d partitions: %d lines of their own, want %d:\n%s", n, perLine, n, out)
		case n > maxPartitionLines && (perLine != 0 || !strings.Contains(out, "sensor-data p0 leader 0 isr [0] · p1")):
			t.Errorf("%d partitions: want them on one line:\n%s", n, out)
		}
		if !strings.Contains(out, "total") || !strings.Contains(out, "─ Events") {
			t.Errorf("%d partitions: the usage total or the events gone:\n%s", n, out)
		}
		if n == maxPartitionLines {
			t.Logf("\n%s", out)
		}
	}
}
