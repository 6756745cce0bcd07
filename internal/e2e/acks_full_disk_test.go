package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/fulldisk"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// reportAckSpan is a span of the report's acks.unchecked_spans (the
// contract).
type reportAckSpan struct {
	Count      int64     `json:"count"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	Partitions []struct {
		Partition   int32 `json:"partition"`
		FirstOffset int64 `json:"first_offset"`
		LastOffset  int64 `json:"last_offset"`
		Count       int64 `json:"count"`
	} `json:"partitions"`
	Error string `json:"error"`
}

// gapEvent is the timeline's line for a span the log could not list.
var gapEvent = regexp.MustCompile(`acknowledged-records log: (\d+) acks not written between (\d\d:\d\d:\d\d) and (\d\d:\d\d:\d\d) \(([^)]*\)[^;]*)\); not checked`)

// TestAckedLogFullDisk fills the disk of the run directory (a small tmpfs)
// under a publishing producer for a few seconds, then frees it. The
// producer's failing log is on screen and its last error; once space
// returns, the log resumes with a marker, the screen names the span that
// went unchecked, and the report carries it: its acknowledged count equals
// what the topic holds, read back after the run, and the span's offsets
// are exactly the topic's records the log does not list. The broker's,
// the store's data and the logs are kept off the full disk (symlinks): the
// fault under test is the producer's log's disk, and the topic read back
// is the truth it is compared with.
func TestAckedLogFullDisk(t *testing.T) {
	d := newDashboard(t)
	disk := fulldisk.Mount(t, 16<<20)
	d.runDir = disk.Dir
	off := t.TempDir()
	for _, sub := range []string{"broker", "store", "logs"} {
		if err := os.Mkdir(filepath.Join(off, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(off, sub), filepath.Join(d.runDir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	d.startHeadless(`
wait-caught-up 60s
wait 25s
pause producer
wait-caught-up 60s
quit
`, "--interval", "50ms", "--seed", "13")
	d.awaitLog("the script waits", regexp.MustCompile(`script: wait 25s`), 2*time.Minute)
	log := filepath.Join(d.runDir, "acked.ndjson")
	filledAt := time.Now()
	disk.Fill(t)
	d.awaitLog("the producer says its log fails", regexp.MustCompile(`acknowledged-records log not written: .*no space left on device; it publishes on`), 15*time.Second)
	// The fault's length: acknowledgements go on meanwhile, none listed.
	full := statSize(t, log)
	time.Sleep(3 * time.Second)
	if got := statSize(t, log); got != full {
		t.Fatalf("acked.ndjson grew on a full disk: %d → %d bytes", full, got)
	}
	disk.Free(t)
	freedAt := time.Now()
	d.awaitLog("the unchecked span on screen", gapEvent, 15*time.Second)
	m := gapEvent.FindStringSubmatch(d.stderr())
	if strings.Contains(d.stderr()[:strings.Index(d.stderr(), m[0])], "script: pause producer") {
		t.Fatalf("the span was named after the script paused the producer: the fault outlasted its window")
	}
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}

	var rep struct {
		Acks struct {
			Acknowledged   int64             `json:"acknowledged"`
			Checked        int64             `json:"checked"`
			Unchecked      int64             `json:"unchecked"`
			UncheckedSpans []reportAckSpan   `json:"unchecked_spans"`
			Missing        []json.RawMessage `json:"missing"`
			LogError       string            `json:"log_error"`
		} `json:"acks"`
		Processes []struct {
			Name      string  `json:"name"`
			LastError *string `json:"last_error"`
		} `json:"processes"`
	}
	b, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	a := rep.Acks
	if len(a.UncheckedSpans) != 1 {
		t.Fatalf("report acks %+v, want one unchecked span", a)
	}
	span := a.UncheckedSpans[0]
	if strconv.FormatInt(span.Count, 10) != m[1] || span.From.Local().Format("15:04:05") != m[2] || span.To.Local().Format("15:04:05") != m[3] {
		t.Errorf("the report's span %+v differs from the screen's %q", span, m[0])
	}
	if span.From.Before(filledAt.Add(-time.Second)) || span.To.After(freedAt.Add(time.Second)) || !strings.Contains(span.Error, "no space left on device") {
		t.Errorf("span %s–%s (%s), the disk was full %s–%s", span.From, span.To, span.Error, filledAt, freedAt)
	}
	if a.Unchecked != span.Count || a.Checked != a.Acknowledged-a.Unchecked || len(a.Missing) != 0 || a.LogError != "" {
		t.Errorf("report acks %+v", a)
	}
	producerErr := ""
	for _, p := range rep.Processes {
		if p.Name == "producer" && p.LastError != nil {
			producerErr = *p.LastError
		}
	}
	if !strings.Contains(producerErr, "no space left on device") {
		t.Errorf("the producer's last_error %q", producerErr)
	}

	// Independently: the topic read back, and the log line by line.
	listed, gaps := readAckedWithGaps(t, log)
	rt := d.readRunTruth()
	if a.Acknowledged != int64(rt.Topic.Count()) {
		t.Errorf("the report counts %d acknowledged records, the topic holds %d", a.Acknowledged, rt.Topic.Count())
	}
	if len(gaps) != 1 || gaps[0] != span.Count {
		t.Errorf("markers in acked.ndjson: %v, want one of %d", gaps, span.Count)
	}
	notListed := map[int32][]int64{}
	for _, r := range rt.Topic.Records {
		k := [2]int64{int64(r.Partition), r.Offset}
		want, ok := listed[k]
		if !ok {
			notListed[r.Partition] = append(notListed[r.Partition], r.Offset)
			continue
		}
		msg, err := telemetry.Decode(r.Key, r.Value)
		if err != nil || msg.SensorID != want.Key || msg.Timestamp != want.Timestamp {
			t.Errorf("listed %+v, the topic holds %s there (%v)", want, r.Key, err)
		}
	}
	var n int64
	for _, p := range span.Partitions {
		offs := notListed[p.Partition]
		if int64(len(offs)) != p.Count || offs[0] != p.FirstOffset || offs[len(offs)-1] != p.LastOffset {
			t.Errorf("span p%d: offsets %d–%d (%d), the topic's records not listed there: %v", p.Partition, p.FirstOffset, p.LastOffset, p.Count, offs)
		}
		n += int64(len(offs))
		delete(notListed, p.Partition)
	}
	if len(notListed) != 0 {
		t.Errorf("records in the topic neither listed nor in the span: %v", notListed)
	}
	t.Logf("disk full %.1f s: %s; report: %d acknowledged = %d in the topic, %d checked, %d unchecked in %+v",
		freedAt.Sub(filledAt).Seconds(), m[0], a.Acknowledged, rt.Topic.Count(), a.Checked, a.Unchecked, span.Partitions)
}

func statSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// readAckedWithGaps reads acked.ndjson, where every line must be a record
// or a marker (no cut line): the records by partition and offset, the
// markers' counts in order.
func readAckedWithGaps(t *testing.T, path string) (map[[2]int64]ackedRecord, []int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[[2]int64]ackedRecord{}
	var gaps []int64
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var g struct {
			NotLogged *reportAckSpan `json:"not_logged"`
		}
		if strings.HasPrefix(line, `{"not_logged":`) && json.Unmarshal([]byte(line), &g) == nil && g.NotLogged != nil {
			gaps = append(gaps, g.NotLogged.Count)
			continue
		}
		var a ackedRecord
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.Key == "" || a.Timestamp == 0 {
			t.Fatalf("acked.ndjson line %d %q: %v", i+1, line, err)
		}
		recs[[2]int64{int64(a.Partition), a.Offset}] = a
	}
	return recs, gaps
}
