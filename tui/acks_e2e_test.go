package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/e2e"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// reportAcks is the report's acks (the contract of --report).
type reportAcks struct {
	Setting      string `json:"setting"`
	Acknowledged int64  `json:"acknowledged"`
	Unconfirmed  int64  `json:"unconfirmed"`
	Pending      int64  `json:"pending"`
	Missing      []struct {
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		Sensor    string `json:"sensor"`
		Timestamp int64  `json:"timestamp"`
		Acks      string `json:"acks"`
	} `json:"missing"`
}

// ackedLine is one line of the producer's acked.ndjson (the contract).
type ackedLine struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       string `json:"key"`
	Timestamp int64  `json:"timestamp"`
	Acks      string `json:"acks"`
}

// lostWrite names an acknowledged write the topic does not hold.
type lostWrite struct {
	partition int32
	offset    int64
	sensor    string
	timestamp int64
}

// acksAgainstTheTopic checks an acks lesson's run without the
// dashboard's audit: it starts the run's brokers again on its data
// directory (restart: the run's flags that choose them; its topic is kept),
// pauses the producer, reads the topic back with a reader of its own
// (librdkafka, not the audit's franz-go) and looks every line the
// producer's acked.ndjson had at the end of the run up by content (key and
// payload timestamp). The records sent with the lossy acks setting that
// are not there must be at least one, those sent with any other none, and
// all of them exactly the report's acks.missing (the lines the producer
// wrote after the report, as the dashboard quit, are in the topic). A
// record sent with acks=0 must be logged with no offset (-1).
func acksAgainstTheTopic(t *testing.T, bin string, rep scenarioReport, lossy string, restart ...string) {
	t.Helper()
	acked := readAcked(t, filepath.Join(rep.runDir, "acked.ndjson"))
	ends := map[int32]int64{}
	for _, a := range acked {
		ends[a.Partition] = max(ends[a.Partition], a.Offset+1)
		if a.Acks == "0" && a.Offset != -1 {
			t.Errorf("a record sent with acks=0 logged at offset %d, want -1", a.Offset)
		}
	}
	brokers, stop := restartPaused(t, bin, rep.runDir, restart...)
	defer stop()
	tp := e2e.ReadTopicThrough(t, brokers, "sensor-data", ends)
	held := heldByContent(tp)
	lost := map[lostWrite]bool{}
	bySetting := map[string]int{}
	for _, a := range acked {
		if !held[contentKey(a.Key, a.Timestamp)] {
			lost[lostWrite{a.Partition, a.Offset, a.Key, a.Timestamp}] = true
			bySetting[a.Acks]++
		}
	}
	reported := map[lostWrite]bool{}
	for _, m := range rep.Acks.Missing {
		reported[lostWrite{m.Partition, m.Offset, m.Sensor, m.Timestamp}] = true
	}
	t.Logf("topic read back: %d records; %d records in acked.ndjson, %d not in the topic (by acks: %v); the report listed %d of %d, %d pending",
		tp.Count(), len(acked), len(lost), bySetting, len(rep.Acks.Missing), rep.Acks.Acknowledged, rep.Acks.Pending)
	for setting, n := range bySetting {
		if setting != lossy && n > 0 {
			t.Errorf("%d records sent with acks=%s are not in the topic", n, setting)
		}
	}
	if bySetting[lossy] == 0 {
		t.Errorf("no record sent with acks=%s is missing from the topic: the lesson lost nothing", lossy)
	}
	if !maps.Equal(lost, reported) {
		t.Errorf("the report's acks.missing differs from the topic read back:\nreported %v\nread back %v", sortedLost(reported), sortedLost(lost))
	}
	// The report is taken before the processes stop: the producer, publishing
	// again after the lesson, logs a few more.
	if rep.Acks.Acknowledged <= 0 || rep.Acks.Acknowledged > int64(len(acked)) {
		t.Errorf("the report counted %d acknowledged writes, acked.ndjson has %d", rep.Acks.Acknowledged, len(acked))
	}
}

func sortedLost(m map[lostWrite]bool) []lostWrite {
	return slices.SortedFunc(maps.Keys(m), func(a, b lostWrite) int {
		if a.partition != b.partition {
			return int(a.partition - b.partition)
		}
		return int(a.offset - b.offset)
	})
}

func readAcked(t *testing.T, path string) []ackedLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("acked.ndjson: %v", err)
	}
	var out []ackedLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		var a ackedLine
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a.Key == "" || (a.Acks != "1" && a.Acks != "all" && a.Acks != "0") {
			t.Fatalf("acked.ndjson line %d %q: %v", n, sc.Text(), err)
		}
		out = append(out, a)
	}
	return out
}

// syncBuffer is a bytes.Buffer safe to read while a child writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// restartPaused starts the dashboard headless on runDir's broker or
// cluster (args: "--cluster", "3") again, pauses its producer, and returns
// the bootstrap servers (its "connected to kafka ADDRS" line) and a
// function that stops it.
func restartPaused(t *testing.T, bin, runDir string, args ...string) (string, func()) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "hold.script")
	if err := os.WriteFile(script, []byte("pause producer\nwait 10m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--headless", "--data-dir", runDir, "--resume", "--script", script}, args...)...)
	cmd.Env = scenarioEnvWithout(os.Environ(), "KAFKA_BROKER", "MONGO_URI")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("restart the run's brokers: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	connected := regexp.MustCompile(`connected to kafka (\S+)`)
	deadline := time.Now().Add(4 * time.Minute)
	for {
		log := stderr.String()
		if m := connected.FindStringSubmatch(log); m != nil && regexp.MustCompile(`script: wait 10m0s`).MatchString(log) {
			return m[1], stop
		}
		select {
		case <-done:
			t.Fatalf("the dashboard ended before its producer paused:\n%s", e2e.Tail(log, 40))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the run's brokers did not come back with the producer paused within 4 min:\n%s", e2e.Tail(stderr.String(), 40))
		}
	}
}

// contentKey names a record by content: its key and its payload's
// timestamp, which a new leader reusing offsets cannot fake.
func contentKey(key string, ts int64) string { return fmt.Sprintf("%s@%d", key, ts) }

// heldByContent is the set of records tp holds, by contentKey.
func heldByContent(tp e2e.Topic) map[string]bool {
	held := map[string]bool{}
	for _, r := range tp.Records {
		if m, err := telemetry.Decode(r.Key, r.Value); err == nil {
			held[contentKey(m.SensorID, m.Timestamp)] = true
		}
	}
	return held
}
