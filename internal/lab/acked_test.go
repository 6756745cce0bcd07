package lab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/audit"
)

// TestAckedTail reads the log as the producer writes it: whole lines only
// (a line cut by a buffer's write waits for its end), its exact form and
// any other JSON of the same fields, and counts what it cannot read.
func TestAckedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), AckedLogName)
	tail := ackedTail{path: path}
	if recs, _, err := tail.read(); err != nil || len(recs) != 0 {
		t.Fatalf("no log yet: %v %v", recs, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"partition":2,"offset":40,"key":"sensor-08","timestamp":1796290759701,"acks":"1"}` + "\n" +
		`{"partition":0,"offset":7,"key":"sensor-09","timest`)
	recs, _, err := tail.read()
	want := audit.Acked{Partition: 2, Offset: 40, Key: "sensor-08", Timestamp: 1796290759701, Acks: "1"}
	if err != nil || len(recs) != 1 || recs[0] != want {
		t.Fatalf("first read %+v %v", recs, err)
	}
	write(`amp":5,"acks":"all"}` + "\n" + "not json\n" +
		`{ "acks": "all", "key": "sensor-\u0030", "timestamp": 6, "offset": 8, "partition": 1 }` + "\n")
	recs, _, err = tail.read()
	if err != nil || len(recs) != 2 || recs[0] != (audit.Acked{Partition: 0, Offset: 7, Key: "sensor-09", Timestamp: 5, Acks: "all"}) ||
		recs[1] != (audit.Acked{Partition: 1, Offset: 8, Key: "sensor-0", Timestamp: 6, Acks: "all"}) || tail.bad != 1 {
		t.Fatalf("second read %+v %v, %d bad", recs, err, tail.bad)
	}
}

// TestAckedTailGapsAndCutLines: a gap's marker is read as a gap, not a bad
// line; a cut line with the next one written onto it costs the cut one
// only, whether the next is a record or a marker.
func TestAckedTailGapsAndCutLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), AckedLogName)
	marker := `{"not_logged":{"count":3,"from":"2026-12-04T05:10:01Z","to":"2026-12-04T05:10:16Z","partitions":[{"partition":0,"first_offset":4,"last_offset":6,"count":3}],"error":"no space left on device"}}`
	log := `{"partition":0,"offset":3,"key":"s","timestamp":3,"acks":"all"}` + "\n" +
		`{"partition":0,"off` + marker + "\n" +
		`{"not_logged":{"count":2,"partit` + `{"partition":0,"offset":7,"key":"s","timestamp":7,"acks":"all"}` + "\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	tail := ackedTail{path: path}
	recs, gaps, err := tail.read()
	if err != nil || len(recs) != 2 || recs[0].Offset != 3 || recs[1].Offset != 7 || tail.bad != 2 {
		t.Fatalf("records %+v %v, %d bad; want offsets 3 and 7, 2 bad", recs, err, tail.bad)
	}
	want := audit.AckGapPartition{Partition: 0, FirstOffset: 4, LastOffset: 6, Count: 3}
	if len(gaps) != 1 || gaps[0].Count != 3 || len(gaps[0].Partitions) != 1 || gaps[0].Partitions[0] != want ||
		gaps[0].From.Format("15:04:05") != "05:10:01" || gaps[0].Err != "no space left on device" {
		t.Fatalf("gaps %+v", gaps)
	}
}

// TestAckedLineIsTheProducers: the form producer.TestAckedLine pins is
// what the fast path reads, field by field.
func TestAckedLineIsTheProducers(t *testing.T) {
	line := []byte(`{"partition":1,"offset":123456789,"key":"sensor-07","timestamp":1796290759701,"acks":"1"}`)
	r, ok := parseAckedLine(line)
	if !ok || r != (audit.Acked{Partition: 1, Offset: 123456789, Key: "sensor-07", Timestamp: 1796290759701, Acks: "1"}) {
		t.Fatalf("the fast path reads %q as %+v, %v", line, r, ok)
	}
	for _, bad := range []string{`{"partition":-1,"offset":1,"key":"a","timestamp":1,"acks":"1"}`, `{"partition":1,"offset":1,"key":"","timestamp":1,"acks":"1"}`,
		`{"partition":1,"offset":1,"key":"a\"b","timestamp":1,"acks":"1"}`, `{"partition":1,"offset":1,"key":"a","timestamp":1,"acks":"1"} x`} {
		if _, ok := parseAckedLine([]byte(bad)); ok {
			t.Errorf("the fast path took %q", bad)
		}
	}
}

// BenchmarkAckedParse is the lab's cost per line of acked.ndjson.
func BenchmarkAckedParse(b *testing.B) {
	line := []byte(`{"partition":1,"offset":123456789,"key":"sensor-07","timestamp":1796290759701,"acks":"1"}`)
	t := ackedTail{}
	for range b.N {
		if _, ok := t.parse(line); !ok {
			b.Fatal("not read")
		}
	}
}
