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
	if recs, err := tail.read(); err != nil || len(recs) != 0 {
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
	recs, err := tail.read()
	want := audit.Acked{Partition: 2, Offset: 40, Key: "sensor-08", Timestamp: 1796290759701, Acks: "1"}
	if err != nil || len(recs) != 1 || recs[0] != want {
		t.Fatalf("first read %+v %v", recs, err)
	}
	write(`amp":5,"acks":"all"}` + "\n" + "not json\n" +
		`{ "acks": "all", "key": "sensor-\u0030", "timestamp": 6, "offset": 8, "partition": 1 }` + "\n")
	recs, err = tail.read()
	if err != nil || len(recs) != 2 || recs[0] != (audit.Acked{Partition: 0, Offset: 7, Key: "sensor-09", Timestamp: 5, Acks: "all"}) ||
		recs[1] != (audit.Acked{Partition: 1, Offset: 8, Key: "sensor-0", Timestamp: 6, Acks: "all"}) || tail.bad != 1 {
		t.Fatalf("second read %+v %v, %d bad", recs, err, tail.bad)
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
