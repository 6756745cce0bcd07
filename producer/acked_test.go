package producer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// TestAckedLine pins the line of acked.ndjson (the contract: partition,
// offset, key, timestamp, acks) and checks it is JSON whatever the key.
func TestAckedLine(t *testing.T) {
	got := string(appendAcked(nil, 1, 123456789, []byte("sensor-07"), 1796290759701, lesson.AcksLeader))
	if want := `{"partition":1,"offset":123456789,"key":"sensor-07","timestamp":1796290759701,"acks":"1"}` + "\n"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
	for _, key := range []string{`a"b`, "a\\b", "é", "\x01", "<&>"} {
		line := appendAcked(nil, 0, 1, []byte(key), 2, lesson.AcksAll)
		var r AckedRecord
		if err := json.Unmarshal(line, &r); err != nil || r.Key != key || r.Acks != "all" {
			t.Errorf("key %q: %s → %+v %v", key, line, r, err)
		}
	}
}

// TestAckedLogBuffersUntilFlush: lines reach the file when flushed (the
// publishing loop's tick) or closed, not one write per record.
func TestAckedLogBuffersUntilFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "acked.ndjson")
	a, err := openAckedLog(path)
	if err != nil {
		t.Fatal(err)
	}
	a.add(0, 1, []byte("s"), 10, lesson.AcksAll)
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("written before a flush: %q", b)
	}
	if err := a.flush().Err; err != nil {
		t.Fatal(err)
	}
	a.add(0, 2, []byte("s"), 20, lesson.AcksLeader)
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `"acks":"1"`) {
		t.Fatalf("log %q", b)
	}
	// Appended, not truncated, by the next producer of the run.
	a, err = openAckedLog(path)
	if err != nil {
		t.Fatal(err)
	}
	a.add(1, 0, []byte("s"), 30, lesson.AcksAll)
	_ = a.close()
	if b, _ := os.ReadFile(path); strings.Count(string(b), "\n") != 3 {
		t.Fatalf("log after a second producer %q", b)
	}
	var none *ackedLog // no --acked-log: nothing, no error
	none.add(0, 0, nil, 0, lesson.AcksAll)
	if none.flush() != (ackedFlush{}) || none.close() != nil {
		t.Fatal("a nil log failed")
	}
}

// BenchmarkAckedLog is the producer's cost per acknowledged record: its
// line formatted and buffered (written out every 200 ms by the loop).
func BenchmarkAckedLog(b *testing.B) {
	a, err := openAckedLog(filepath.Join(b.TempDir(), "acked.ndjson"))
	if err != nil {
		b.Fatal(err)
	}
	key := []byte("sensor-07")
	for i := range b.N {
		a.add(int32(i%3), int64(i), key, 1796290759701+int64(i), lesson.AcksAll)
	}
	if err := a.close(); err != nil {
		b.Fatal(err)
	}
}
