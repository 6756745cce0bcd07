package board

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// start is consumer-current's start number n at sec, rebuilding with
// strategy as the Rebuild event e says, caught up after processed
// messages in ms.
func start(b *Board, pid int, sec float64, e status.Event, processed, ms, history int64) {
	b.Apply(ProcStarted{Name: Current, PID: pid, At: at(sec)})
	e.Type = status.Rebuild
	b.Apply(ev(Current, sec+0.1, e))
	b.Apply(ev(Current, sec+0.2, status.Event{Type: status.CaughtUp, Processed: processed, Millis: ms, History: history}))
}

func TestRebuildsSaidAndReported(t *testing.T) {
	b := newBoard(Tick{Now: at(0)})
	if got := b.Process(Current).Current.Rebuild; got != "replay" {
		t.Fatalf("strategy %q, want the seed's replay by default", got)
	}
	start(b, 10, 1, status.Event{Strategy: "replay"}, 1000, 400, 1000)
	b.Apply(Rebuild{At: at(2), Strategy: "snapshot"})
	if !hasEvent(b, Current, "from its next start: rebuild by loading its snapshot") {
		t.Fatalf("the switch is not said: %q", lastEvent(b))
	}
	b.Apply(ev(Current, 2.1, status.Event{Type: status.Prepares, Strategy: "snapshot"}))
	if v := b.Process(Current); v.Current.Prepares != "snapshot" || v.Current.Prepared != "" {
		t.Fatalf("prepares %q prepared %q", v.Current.Prepares, v.Current.Prepared)
	}
	b.Apply(ev(Current, 2.2, status.Event{Type: status.Prepared, Strategy: "snapshot", Sensors: 10}))
	v := b.Process(Current)
	if v.Current.Prepared != "snapshot" || !strings.Contains(lastEvent(b), "wrote a snapshot (10 sensors)") {
		t.Fatalf("prepared %q, last event %q", v.Current.Prepared, lastEvent(b))
	}
	if got := v.Current.LastRebuild.Text(b.loc()); got != "replay of 1,000 messages, 400 ms" {
		t.Fatalf("rebuild %q", got)
	}
	b.Apply(ProcExited{Name: Current, PID: 10, At: at(3), Signal: "SIGKILL"})
	start(b, 11, 4, status.Event{Strategy: "snapshot", SnapshotAt: at(2.2), Sensors: 10,
		Positions: []status.Position{{Partition: 0, Offset: 400}}}, 12, 41, 1012)
	if !hasEvent(b, Current, "rebuilds from the snapshot of 10:00:02 (10 sensors), reading on from offsets 0:400") {
		t.Fatal("the snapshot rebuild is not said")
	}
	if !hasEvent(b, Current, "caught up: snapshot of 10:00:02 + 12 messages, 41 ms") {
		t.Fatalf("the rebuild's cost is not said: %q", lastEvent(b))
	}
	b.Apply(SensorsSnapshot{At: at(4.5), CaughtUp: true, Sensors: []SensorState{{SensorID: "s1", Timestamp: 1}}})
	b.Apply(Tick{Now: at(4.6)})
	if sv := b.Sensors(); sv.Rebuild != "snapshot of 10:00:02 + 12 messages, 41 ms" || sv.RebuildShort != "snap 10:00:02 + 12 msgs, 41 ms" {
		t.Fatalf("sensors panel %q / %q", sv.Rebuild, sv.RebuildShort)
	}
	b.Apply(ProcExited{Name: Current, PID: 11, At: at(5), Signal: "SIGKILL"})
	start(b, 12, 6, status.Event{Strategy: "changelog", Reason: "changelog x is empty (nothing published yet)"}, 1020, 420, 1020)
	if !hasEvent(b, Current, "cannot rebuild from its changelog (changelog x is empty (nothing published yet)): replays the topic from earliest") {
		t.Fatal("the fallback is not said")
	}
	// A start that did not catch up yet has a rebuild without a cost.
	b.Apply(ProcExited{Name: Current, PID: 12, At: at(7), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Current, PID: 13, At: at(8)})
	b.Apply(ev(Current, 8.1, status.Event{Type: status.Rebuild, Strategy: "changelog", Count: 11, Sensors: 10}))

	var r struct {
		Processes []struct {
			Name     string `json:"name"`
			Rebuild  string `json:"rebuild"`
			Rebuilds []struct {
				Strategy    string  `json:"strategy"`
				RecordsRead *int64  `json:"records_read"`
				Millis      *int64  `json:"millis"`
				FellBack    *string `json:"fell_back"`
			} `json:"rebuilds"`
		} `json:"processes"`
	}
	raw, err := json.Marshal(b.Report())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Processes {
		if p.Name != Current {
			if p.Rebuild != "" || p.Rebuilds != nil {
				t.Errorf("%s has rebuild fields", p.Name)
			}
			continue
		}
		if p.Rebuild != "snapshot" || len(p.Rebuilds) != 4 {
			t.Fatalf("rebuild %q, %d rebuilds", p.Rebuild, len(p.Rebuilds))
		}
		got := []string{}
		for _, rb := range p.Rebuilds {
			s := rb.Strategy
			if rb.RecordsRead != nil {
				s += " " + Count(*rb.RecordsRead) + " " + Millis(*rb.Millis)
			}
			if rb.FellBack != nil {
				s += " fell back: " + *rb.FellBack
			}
			got = append(got, s)
		}
		want := "replay 1,000 400 ms|snapshot 12 41 ms|changelog 1,020 420 ms fell back: changelog x is empty (nothing published yet)|changelog"
		if strings.Join(got, "|") != want {
			t.Fatalf("rebuilds\n%s\nwant\n%s", strings.Join(got, "|"), want)
		}
	}

	cost := b.Cost()
	if len(cost.Points) != 3 || len(cost.Rows) != 1 {
		t.Fatalf("%d points in %d rows, want 3 in one (histories within 2%%)", len(cost.Points), len(cost.Rows))
	}
	if row := cost.Rows[0]; row.ByMethod["replay"].History != 1020 || row.ByMethod["snapshot"].Millis != 41 {
		t.Fatalf("row %+v: want the latest replay (the fallback) and the snapshot", row)
	}
}

// TestChangelogMarksNamed: the changelog's records are named for what they
// are, values and marks, when it is published and when a start reads it,
// so 11 published and 12 read do not look like a record appeared.
func TestChangelogMarksNamed(t *testing.T) {
	b := newBoard(ProcStarted{Name: Current, PID: 12, At: at(1)})
	b.Apply(ev(Current, 2, status.Event{Type: status.Prepares, Strategy: "changelog"}))
	b.Apply(ev(Current, 2.2, status.Event{Type: status.Prepared, Strategy: "changelog", Count: 11, Sensors: 10}))
	if want := "published its changelog for its next start: 11 records (10 values, 1 mark), 10 sensors"; !strings.Contains(lastEvent(b), want) {
		t.Fatalf("last event %q, want %q", lastEvent(b), want)
	}
	b.Apply(ProcExited{Name: Current, PID: 12, At: at(7), Signal: "SIGKILL"})
	b.Apply(ProcStarted{Name: Current, PID: 13, At: at(8)})
	b.Apply(ev(Current, 8.1, status.Event{Type: status.Rebuild, Strategy: "changelog", Count: 12, Marks: 2, Sensors: 10}))
	runs := b.Rebuilds()
	if len(runs) == 0 {
		t.Fatal("no rebuild")
	}
	if got, want := runs[len(runs)-1].Source(time.UTC), "changelog of 12 records (10 values, 2 marks)"; got != want {
		t.Fatalf("source %q, want %q", got, want)
	}
}
