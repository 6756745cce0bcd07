package board

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// TestAckedGaps: the producer's failing log is its last error and an event
// (its state stays); each gap the log names later is an event once, with
// its span, and the report's acks carries it and counts it unchecked.
func TestAckedGaps(t *testing.T) {
	b := newBoard(ProcStarted{Name: Producer, PID: 7, At: at(0)},
		ev(Producer, 0.1, status.Event{Type: status.Started, PID: 7, Acks: "all"}))
	state := b.Process(Producer).State
	b.Apply(ev(Producer, 1, status.Event{Type: status.AckedLogFailed, Error: "acknowledged-records log not written: write acked.ndjson: no space left on device"}))
	if p := b.Process(Producer); p.LastError == "" || p.State != state {
		t.Fatalf("after the failure: last error %q, state %v (was %v)", p.LastError, p.State, state)
	}
	if !hasEvent(b, Producer, "no space left on device; it publishes on") {
		t.Fatalf("failure event: %q", lastEvent(b))
	}
	if v := b.Acks(); !strings.Contains(v.LogFailing, "no space left") || !strings.Contains(string(mustJSON(t, b.Report())), `"log_error":"acknowledged-records log not written`) {
		t.Fatalf("while the log fails: %+v", v)
	}
	from, to := at(1).Add(-time.Second), at(16)
	gap := AckedGap{Count: 161, From: from, To: to, Err: "no space left on device",
		Partitions: []AckedGapPartition{{Partition: 0, FirstOffset: 30, LastOffset: 90, Count: 61}, {Partition: 2, FirstOffset: 7, LastOffset: 106, Count: 100}}}
	b.Apply(AckedCheck{At: at(17), Acknowledged: 257, Unchecked: 161, Gaps: []AckedGap{gap}})
	want := "acknowledged-records log: 161 acks not written between " + from.Local().Format("15:04:05") + " and " + to.Local().Format("15:04:05") +
		" (p0 offsets 30–90 (61), p2 offsets 7–106 (100): no space left on device); not checked"
	if !hasEvent(b, Producer, want) {
		t.Fatalf("gap event %q, want %q", lastEvent(b), want)
	}
	if v := b.Acks(); v.LogFailing != "" {
		t.Fatalf("written again, still failing: %q", v.LogFailing)
	}
	n := countEvents(b, "not checked")
	b.Apply(AckedCheck{At: at(18), Acknowledged: 260, Unchecked: 161, Gaps: []AckedGap{gap}})
	if countEvents(b, "not checked") != n {
		t.Fatal("the same gap named again")
	}
	var r struct {
		Acks ReportAcks `json:"acks"`
	}
	raw, _ := json.Marshal(b.Report())
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	a := r.Acks
	if a.Acknowledged != 260 || a.Checked != 99 || a.Unchecked != 161 || len(a.UncheckedSpans) != 1 ||
		a.UncheckedSpans[0].Count != 161 || !a.UncheckedSpans[0].From.Equal(from) || len(a.UncheckedSpans[0].Partitions) != 2 {
		t.Fatalf("report acks %+v", a)
	}
	if !strings.Contains(string(raw), `"last_error":"acknowledged-records log not written`) {
		t.Fatalf("report without the producer's last error: %s", raw)
	}
}
