package producer

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// TestAcksNoneLogsNoOffset: with acks=0 librdkafka's reports carry no
// offset (a batch counts up from -1001, past 0 when it holds over a
// thousand records), so every line of the log says UnknownOffset; the
// producer's sent count and its log still count every record the topic
// took.
func TestAcksNoneLogsNoOffset(t *testing.T) {
	brokers := startBroker(t)
	history := make(chan HistoryRequest)
	control := make(chan Control)
	log := filepath.Join(t.TempDir(), "acked.ndjson")
	sink := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Brokers: brokers, Topic: testTopic, Sensors: 3, Interval: 20 * time.Millisecond, Seed: 4,
			Acks: lesson.AcksNone, AckedLog: log, History: history, Control: control}, status.NewTo(Role, sink), testLog(t))
	}()
	defer func() {
		cancel()
		<-done
	}()
	sink.await(t, "progress", func(e status.Event) bool { return e.Type == status.Progress && e.Produced >= 6 }, 20*time.Second)
	// A burst fills batches of more than a thousand records.
	req := HistoryRequest{N: 6000, Reply: make(chan HistoryResult, 1)}
	history <- req
	if res := <-req.Reply; res.Error != "" || res.Delivered != 6000 {
		t.Fatalf("history: %+v", res)
	}
	control <- Pause
	paused := sink.await(t, "paused", func(e status.Event) bool { return e.Type == status.Paused }, 10*time.Second)

	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r AckedRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Offset != UnknownOffset || r.Acks != "0" {
			t.Fatalf("line %q: want offset %d with acks 0", sc.Text(), UnknownOffset)
		}
		lines++
	}
	topic := int64(len(readAll(t, brokers)))
	if lines != topic || paused.Produced != topic {
		t.Fatalf("the log lists %d records, the producer says %d sent, the topic holds %d", lines, paused.Produced, topic)
	}
}
