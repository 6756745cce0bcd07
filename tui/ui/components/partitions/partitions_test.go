package partitions

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/tui/ui/common"
	"github.com/kafka-recovery-lab/krl/tui/ui/theme"
)

func row(p, leader int32, replicas, isr []int32, sensors ...string) board.PartitionRow {
	return board.PartitionRow{PartitionMeta: board.PartitionMeta{Partition: p, Leader: leader, Replicas: replicas, ISR: isr, Sensors: sensors},
		HighWatermark: 1234, Committed: 1200, Lag: 34, Leaderless: leader < 0, UnderReplicated: len(isr) < len(replicas)}
}

func plain(lines []string) string { return ansi.Strip(strings.Join(lines, "\n")) }

func TestLines(t *testing.T) {
	st := theme.New(nil)
	one := []int32{0}
	emb := Panel{Styles: st, View: board.PartitionsView{Topic: "sensor-data", Seen: true, Nodes: one, SingleNode: true, MinISR: 1,
		Rows: []board.PartitionRow{row(0, 0, one, one, "sensor-09"), row(1, 0, one, one, "sensor-02", "sensor-03")}}}
	lines := emb.Lines(118)
	got := plain(lines)
	for _, want := range []string{
		"p0  leader 0  replicas [0]  isr [0]  hw 1,234  committed 1,200 lag 34  sensors 09",
		"p1  leader 0  replicas [0]  isr [0]  hw 1,234  committed 1,200 lag 34  sensors 02 03",
		"one node (id 0), no replication",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, l := range lines {
		if w := common.Width(l); w != 118 {
			t.Errorf("line of %d cells: %q", w, l)
		}
	}

	all := []int32{1, 2, 3}
	cl := Panel{Styles: st, View: board.PartitionsView{Topic: "sensor-data", Seen: true, Nodes: all, MinISR: 2,
		Rows: []board.PartitionRow{row(0, 1, all, []int32{1, 3}), row(1, -1, all, all)}}}
	got = plain(cl.Lines(118))
	if !strings.Contains(got, "p1  leader none  replicas [1 2 3]  isr [1 2 3]") || !strings.Contains(got, "3 nodes · min.insync.replicas 2") {
		t.Errorf("cluster lines:\n%s", got)
	}
	if s := ansi.Strip(cl.Summary(118)); !strings.Contains(s, "sensor-data p0 leader 1 isr [1 3] · p1 leader none isr [1 2 3]") {
		t.Errorf("summary: %q", s)
	}
	// Narrow or empty widths never panic and keep the width.
	for _, w := range []int{0, 1, 10, 40} {
		for _, l := range append(cl.Lines(w), cl.Summary(w)) {
			if got := common.Width(l); got != w {
				t.Errorf("width %d: line of %d", w, got)
			}
		}
	}
	if got := plain(Panel{Styles: st, View: board.PartitionsView{Topic: "t"}}.Lines(60)); !strings.Contains(got, "reading the metadata") {
		t.Errorf("before the first read: %q", got)
	}
}

func TestDetail(t *testing.T) {
	st := theme.New(nil)
	all := []int32{1, 2, 3}
	moved := row(1, 3, all, []int32{1, 3})
	moved.LastMove = &board.LeaderMove{From: 2, To: 3, At: time.Date(2026, 3, 1, 10, 41, 7, 0, time.UTC), After: 5300 * time.Millisecond}
	low := row(2, 1, all, []int32{1})
	low.BelowMinISR = true
	v := board.PartitionsView{Topic: "sensor-data", Seen: true, Nodes: all, MinISR: 2, Group: "demo-usage",
		Rows: []board.PartitionRow{row(0, 1, all, all), moved, low},
		Keys: board.KeysCheck{Seen: true, Keys: 3, Records: 90, Disordered: 2, DisorderedKeys: []string{"sensor-05"},
			Scattered: []string{"sensor-02 in [1 2], computed 1"}}}
	lines := Panel{Styles: st, View: v}.Detail(118)
	got := plain(lines)
	for _, want := range []string{
		"Leaders  p0 leader 1, no change seen in this run",
		"p1 leader 2 → 3 at 10:41:07, 5.3 s after broker-2 exited",
		"Writes   acks=all refused on p2: ISR below min.insync.replicas 2 (NOT_ENOUGH_REPLICAS)",
		"Keys     records in another partition than their key's: sensor-02 in [1 2], computed 1",
		"2 of 90 records out of order for their key (05)",
		"committed: demo-usage's committed offset",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, l := range lines {
		if common.Width(l) != 118 {
			t.Errorf("a line of %d cells, want 118: %q", common.Width(l), l)
		}
	}
	// A dead leader not yet fenced, and watermarks whose latest read failed.
	down := row(0, 2, all, all)
	down.LeaderDown = true
	w := board.PartitionsView{Topic: "sensor-data", Seen: true, Nodes: all, MinISR: 2, OffsetsStale: true,
		Rows: []board.PartitionRow{down, row(1, 1, all, all), row(2, 3, all, all)}}
	got = plain(Panel{Styles: st, View: w}.Detail(118))
	for _, want := range []string{
		"p0  leader 2 (down)",
		"hw stale: the latest read failed",
		"acks=all writes to p0 (leader 2 down) wait for the controller to elect a leader from the ISR",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "taken on every partition") {
		t.Errorf("writes said taken while p0's leader is down:\n%s", got)
	}
	// Any width: exact width, no panic (the view scrolls the height).
	for _, width := range []int{0, 1, 20, 80} {
		for _, l := range (Panel{Styles: st, View: v}).Detail(width) {
			if common.Width(l) != width {
				t.Errorf("width %d: line of %d cells", width, common.Width(l))
			}
		}
	}
}

// TestAckedUnchecked: a span the producer could not list is said next to
// the count, as not checked.
func TestAckedUnchecked(t *testing.T) {
	from := time.Date(2026, 3, 1, 10, 41, 7, 0, time.Local)
	v := board.PartitionsView{Topic: "sensor-data", Seen: true, Nodes: []int32{0}, SingleNode: true, MinISR: 1,
		Rows: []board.PartitionRow{row(0, 0, []int32{0}, []int32{0})},
		Acked: board.AcksView{Setting: "all", Seen: true, Acknowledged: 257, Unchecked: 161,
			Gaps: []board.AckedGap{{Count: 161, From: from, To: from.Add(15 * time.Second), Err: "no space left on device"}}}}
	got := plain(Panel{Styles: theme.New(nil), View: v}.Detail(140))
	if want := "161 acknowledged writes not in the producer's log (10:41:07–10:41:22, no space left on device): not checked"; !strings.Contains(got, want) {
		t.Errorf("missing %q in\n%s", want, got)
	}
}
