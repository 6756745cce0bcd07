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
