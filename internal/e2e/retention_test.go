package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// retentionReport is the report's retention section and the partitions'
// log starts, as the contract says.
type retentionReport struct {
	Retention struct {
		RetentionMs  int64         `json:"retention_ms"`
		Deleted      []offsetRange `json:"deleted"`
		AuditSkipped []offsetRange `json:"audit_skipped"`
	} `json:"retention"`
	Partitions []struct {
		Partition     int32  `json:"partition"`
		HighWatermark *int64 `json:"high_watermark"`
		LogStart      *int64 `json:"log_start"`
	} `json:"partitions"`
	Keys *struct {
		Records int64           `json:"records"`
		Through map[int32]int64 `json:"through"`
	} `json:"keys"`
}

type offsetRange struct {
	Partition int32 `json:"partition"`
	First     int64 `json:"first"`
	Last      int64 `json:"last"`
}

// TestRetentionDeletesWhileTheAuditKeepsUp runs the dashboard with
// --retention 5s while the producer publishes: the broker deletes the
// oldest records, the timeline names them ("p2: offsets 0–119 deleted by
// retention"), and the report's deleted ranges are each partition's
// offsets from 0 up to its log start. The audit read them before they
// went: nothing is skipped, it is past every log start, and it holds more
// valid records than the topic still has below its log starts.
func TestRetentionDeletesWhileTheAuditKeepsUp(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless("", "--retention", "5s", "--interval", "100ms", "--seed", "17")
	d.awaitLog("a log start moved by retention", regexp.MustCompile(`p\d: offsets? [0-9,–]+ deleted by retention`), 40*time.Second)
	d.child.Signal(syscall.SIGTERM)
	if code := d.waitExit(time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d\n%s", code, Tail(d.stderr(), 40))
	}
	b, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	var r retentionReport
	if err := json.Unmarshal(b, &r); err != nil || r.Keys == nil || len(r.Partitions) != 3 {
		t.Fatalf("report (%v):\n%s", err, b)
	}
	if r.Retention.RetentionMs != 5000 || len(r.Retention.Deleted) == 0 {
		t.Fatalf("retention %+v", r.Retention)
	}
	if len(r.Retention.AuditSkipped) != 0 {
		t.Fatalf("the audit missed records it should have read before their deletion: %+v", r.Retention.AuditSkipped)
	}
	var belowStarts, through int64
	for _, p := range r.Partitions {
		if p.LogStart == nil || p.HighWatermark == nil || *p.LogStart > *p.HighWatermark {
			t.Fatalf("p%d: log start %v, high watermark %v", p.Partition, p.LogStart, p.HighWatermark)
		}
		// The deleted ranges of a partition are contiguous from offset 0 to
		// just below its log start.
		next := int64(0)
		for _, dr := range r.Retention.Deleted {
			if dr.Partition != p.Partition {
				continue
			}
			if dr.First != next || dr.Last < dr.First {
				t.Fatalf("p%d: deleted %+v after offset %d", p.Partition, r.Retention.Deleted, next)
			}
			next = dr.Last + 1
		}
		if next != *p.LogStart {
			t.Fatalf("p%d: deleted up to %d, log start %d (%+v)", p.Partition, next, *p.LogStart, r.Retention.Deleted)
		}
		if r.Keys.Through[p.Partition] < *p.LogStart {
			t.Fatalf("p%d: the audit read up to %d, behind the log start %d", p.Partition, r.Keys.Through[p.Partition], *p.LogStart)
		}
		belowStarts += *p.LogStart
		through += r.Keys.Through[p.Partition]
	}
	// Every record is valid and offsets are dense: the audit still counts
	// every record up to where it read, the deleted ones included.
	if belowStarts == 0 || r.Keys.Records != through {
		t.Fatalf("the audit holds %d valid records, read through %d offsets; %d deleted below the log starts", r.Keys.Records, through, belowStarts)
	}
	t.Logf("deleted %+v; the audit holds %d records, %d of them deleted from the topic", r.Retention.Deleted, r.Keys.Records, belowStarts)
}

// TestRetentionDeletesWhatUsageHadNotRead stops consumer-usage until
// retention deleted messages past its committed offset, then starts it
// again: its fetch is out of range and it goes on at the log end
// (auto.offset.reset=latest). The messages it never counted are named:
// those deleted before it read them as deleted-by-retention, the rest it
// jumped over as never-recorded; a sensor's first message after the jump
// takes its delta from the reading before the stop (stale-reading, naive
// mode). The audit read them all before their deletion, so each sensor's
// causes add up to its drift.
func TestRetentionDeletesWhatUsageHadNotRead(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
stop consumer-usage
wait-deleted 60s
start consumer-usage
wait-caught-up 60s
pause producer
wait-caught-up 60s
quit
`, "--retention", "5s", "--interval", "100ms", "--seed", "19")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d\n%s", code, Tail(d.stderr(), 40))
	}
	r := d.readReport()
	deleted := r.DriftCausesByKind["deleted-by-retention"]
	if deleted.Messages == 0 || deleted.DriftHours >= 0 {
		t.Fatalf("no message named as deleted by retention before consumer-usage read it: %+v", r.DriftCausesByKind)
	}
	for kind, k := range r.DriftCausesByKind {
		switch {
		case kind == "deleted-by-retention" || kind == "never-recorded":
		case kind == "stale-reading" && k.Messages <= 10:
		default:
			t.Errorf("%d drift causes of kind %s: consumer-usage only skipped messages, once", k.Messages, kind)
		}
	}
	for _, s := range r.Sensors {
		if s.Drift == nil {
			t.Fatalf("%s: no drift in the report", s.SensorID)
		}
		var h float64
		for _, c := range s.DriftCauses {
			h += c.RecordedHours - c.ExpectedHours
		}
		if diff := h - s.Drift.Hours; diff > 0.005 || diff < -0.005 {
			t.Errorf("%s: causes add up to %.2f h, drift %.2f h", s.SensorID, h, s.Drift.Hours)
		}
	}
	var rr retentionReport
	b, _ := os.ReadFile(d.report)
	if err := json.Unmarshal(b, &rr); err != nil || len(rr.Retention.AuditSkipped) != 0 || len(rr.Retention.Deleted) == 0 {
		t.Fatalf("retention %+v (%v)", rr.Retention, err)
	}
	t.Logf("never counted: %d deleted by retention (%.2f h), %d more jumped over (%.2f h)", deleted.Messages, deleted.DriftHours,
		r.DriftCausesByKind["never-recorded"].Messages, r.DriftCausesByKind["never-recorded"].DriftHours)
}

// TestRetentionForgetsAParkedSensor parks sensor-07 (the producer stops
// publishing it), waits until retention deleted its last message, then
// crashes and starts consumer-current: its replay from earliest cannot
// rebuild sensor-07, and the report names it forgotten, with its last
// message (below its partition's log start, in the partition its key
// hashes to) and when it was deleted. No other sensor is.
func TestRetentionForgetsAParkedSensor(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
park sensor-07
wait-last-deleted sensor-07 60s
crash consumer-current
start consumer-current
wait-caught-up 60s
quit
`, "--retention", "5s", "--interval", "100ms", "--seed", "23")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d\n%s", code, Tail(d.stderr(), 40))
	}
	b, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		retentionReport
		Retention struct {
			Forgotten []struct {
				Sensor    string     `json:"sensor"`
				Partition int32      `json:"partition"`
				Offset    int64      `json:"offset"`
				DeletedAt *time.Time `json:"deleted_at"`
			} `json:"forgotten"`
		} `json:"retention"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	f := r.Retention.Forgotten
	if len(f) != 1 || f[0].Sensor != "sensor-07" || f[0].Partition != crc32Partition("sensor-07", 3) || f[0].DeletedAt == nil {
		t.Fatalf("forgotten %+v", f)
	}
	for _, p := range r.Partitions {
		if p.Partition == f[0].Partition && (p.LogStart == nil || f[0].Offset >= *p.LogStart) {
			t.Fatalf("sensor-07's last message p%d@%d is not below the log start %v", p.Partition, f[0].Offset, p.LogStart)
		}
	}
	rep := d.readReport()
	for _, s := range rep.Sensors {
		if (s.Current == nil) != (s.SensorID == "sensor-07") {
			t.Errorf("%s: consumer-current's state %+v", s.SensorID, s.Current)
		}
	}
	t.Logf("forgotten %+v", f[0])
}
