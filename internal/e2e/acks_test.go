package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// ackedRecord is one line of the producer's acked.ndjson (the contract).
type ackedRecord struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       string `json:"key"`
	Timestamp int64  `json:"timestamp"`
	Acks      string `json:"acks"`
}

// TestAcksSwitch switches the running producer acks=all → 1 → all → 1
// with the script's acks (the a key's call) and checks, against the topic
// read back after the run: every record the producer logged as
// acknowledged is in the topic at the partition and offset it was told,
// with its key and timestamp, and the topic holds nothing else (one broker,
// nothing lost, no retry written twice); the log names the setting each
// record was written with, both settings in turn; the report's acks says
// the last setting, the count of the log, and nothing missing. On the
// embedded broker and, with KAFKA_BROKER, on Apache Kafka.
func TestAcksSwitch(t *testing.T) {
	d := newDashboard(t)
	d.startHeadless(`
wait-caught-up 60s
wait 1s
acks 1
wait 2s
acks all
wait 2s
acks 1
wait 2s
pause producer
wait-caught-up 60s
quit
`, "--usage-mode", "guarded", "--interval", "50ms", "--seed", "13")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("dashboard exited %d", code)
	}
	log := d.stderr()
	for _, want := range []string{"acks=1 in force", "acks=all in force", "from now on acks=1: the leader confirms a write alone"} {
		if !strings.Contains(log, want) {
			t.Errorf("no %q in the event log", want)
		}
	}
	acked := readAckedLog(t, filepath.Join(d.runDir, "acked.ndjson"))
	// The settings in the order the log lists them: all, 1, all, 1.
	var runs []string
	for _, a := range acked {
		if len(runs) == 0 || runs[len(runs)-1] != a.Acks {
			runs = append(runs, a.Acks)
		}
	}
	if strings.Join(runs, " ") != "all 1 all 1" {
		t.Errorf("settings in the log, in turn: %v, want all 1 all 1", runs)
	}
	rt := d.readRunTruth()
	at := map[[2]int64]Record{}
	for _, r := range rt.Topic.Records {
		at[[2]int64{int64(r.Partition), r.Offset}] = r
	}
	for _, a := range acked {
		r, ok := at[[2]int64{int64(a.Partition), a.Offset}]
		if !ok {
			t.Fatalf("acknowledged %+v: no record at that offset", a)
		}
		m, err := telemetry.Decode(r.Key, r.Value)
		if err != nil || m.SensorID != a.Key || m.Timestamp != a.Timestamp {
			t.Fatalf("acknowledged %+v: the topic holds %s %d there (%v)", a, r.Key, m.Timestamp, err)
		}
	}
	if len(acked) != rt.Topic.Count() {
		t.Errorf("%d acknowledged records logged, the topic holds %d", len(acked), rt.Topic.Count())
	}
	var rep struct {
		Acks struct {
			Setting      string            `json:"setting"`
			Acknowledged int64             `json:"acknowledged"`
			Missing      []json.RawMessage `json:"missing"`
		} `json:"acks"`
	}
	b, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Acks.Setting != "1" || rep.Acks.Acknowledged != int64(len(acked)) || rep.Acks.Missing == nil || len(rep.Acks.Missing) != 0 {
		t.Errorf("report acks %+v, want setting 1, %d acknowledged, missing []", rep.Acks, len(acked))
	}
	t.Logf("%d records acknowledged (settings in turn %v), each in the topic where it was told", len(acked), runs)
}

func readAckedLog(t *testing.T, path string) []ackedRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("acked.ndjson: %v", err)
	}
	defer f.Close()
	var out []ackedRecord
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var a ackedRecord
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a.Key == "" || a.Timestamp == 0 || (a.Acks != "1" && a.Acks != "all") {
			t.Fatalf("acked.ndjson line %d %q: %v", n, sc.Text(), err)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		t.Fatal("acked.ndjson is empty")
	}
	return out
}
