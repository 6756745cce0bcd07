package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/e2e"
)

// TestAcksNoneBrokerCrash: the producer writes with acks=0 on the embedded
// broker, which is killed (SIGKILL) while the producer publishes and
// started again. The records the producer logged that the topic lacks,
// read back with a reader of its own (librdkafka, not the audit's
// franz-go), must be exactly the report's acks.missing, every one sent
// with acks=0, none of them left pending.
func TestAcksNoneBrokerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole stack")
	}
	if os.Getenv("KAFKA_BROKER") != "" || os.Getenv("KRL_CLUSTER") != "" {
		t.Skip("kills the dashboard's own embedded broker")
	}
	bin := e2e.Binary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "crash.script")
	// consumer-usage is stopped first: the lesson is the producer's, and
	// its store writes at 20,000 records a second would take a core.
	err := os.WriteFile(script, []byte(`stop consumer-usage
acks 0
wait 2s
crash broker
wait 1s
start broker
wait 3s
pause producer
wait 20s
quit
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	report, runDir := filepath.Join(dir, "report.json"), filepath.Join(dir, "run")
	args := []string{"--headless", "--script", script, "--report", report, "--sensors", "1000", "--interval", "50ms", "--seed", "7", "--data-dir", runDir}
	stderr, code := runHeadlessDashboard(t, bin, args, scenarioEnvWithout(os.Environ(), "KAFKA_BROKER", "MONGO_URI"), 3*time.Minute)
	if code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", code, e2e.Tail(stderr, 40))
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var rep scenarioReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}

	acked := readAcked(t, filepath.Join(runDir, "acked.ndjson"))
	brokers, stop := restartPaused(t, bin, runDir)
	defer stop()
	tp := e2e.ReadTopic(t, brokers, "sensor-data")
	held := heldByContent(tp)
	lost := map[lostWrite]bool{}
	bySetting := map[string]int{}
	for _, a := range acked {
		bySetting[a.Acks+" logged"]++
		if a.Acks == "0" && a.Offset != -1 {
			t.Errorf("a record sent with acks=0 logged at offset %d, want -1", a.Offset)
		}
		if !held[contentKey(a.Key, a.Timestamp)] {
			lost[lostWrite{a.Partition, a.Offset, a.Key, a.Timestamp}] = true
			bySetting[a.Acks+" lost"]++
		}
	}
	reported := map[lostWrite]bool{}
	for _, m := range rep.Acks.Missing {
		reported[lostWrite{m.Partition, m.Offset, m.Sensor, m.Timestamp}] = true
		if m.Acks != "0" {
			t.Errorf("the report names a write sent with acks=%s missing", m.Acks)
		}
	}
	t.Logf("topic read back: %d records; acked.ndjson: %d lines %v; the report: %d acknowledged, %d unconfirmed, %d pending, %d missing",
		tp.Count(), len(acked), bySetting, rep.Acks.Acknowledged, rep.Acks.Unconfirmed, rep.Acks.Pending, len(rep.Acks.Missing))
	if bySetting["0 logged"] == 0 {
		t.Fatal("nothing was logged as sent with acks=0")
	}
	if rep.Acks.Pending != 0 {
		t.Errorf("%d records still pending with the producer paused and the audit caught up", rep.Acks.Pending)
	}
	if !maps.Equal(lost, reported) {
		t.Errorf("the report's acks.missing differs from the topic read back:\nreported %v\nread back %v", sortedLost(reported), sortedLost(lost))
	}
}
