package producer

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/fulldisk"
	"github.com/kafka-recovery-lab/krl/internal/lesson"
)

// TestAckedLogFullDisk fills the disk under the log (a small tmpfs): the
// flush fails with ENOSPC and leaves no cut line; the records acknowledged
// meanwhile are counted, not listed; once space returns, the next flush
// writes a marker naming them (count, per partition first and last
// offset), then the records after it.
func TestAckedLogFullDisk(t *testing.T) {
	disk := fulldisk.Mount(t, 1<<20)
	path := filepath.Join(disk.Dir, "acked.ndjson")
	a, err := openAckedLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	key := []byte("sensor-01")
	a.add(0, 0, key, 1, lesson.AcksAll)
	if out := a.flush(); out.Err != nil {
		t.Fatal(out.Err)
	}
	disk.Fill(t)
	for i := range int64(300) { // more than a page: the write is cut
		a.add(int32(i%2), 1+i, key, 2+i, lesson.AcksAll)
	}
	out := a.flush()
	if !errors.Is(out.Err, syscall.ENOSPC) || !out.Failed {
		t.Fatalf("flush on a full disk: %+v, want ENOSPC, failed", out)
	}
	a.add(1, 500, key, 999, lesson.AcksAll)
	if out := a.flush(); out.Err == nil || out.Failed {
		t.Fatalf("second flush on a full disk: %+v, want an error said once", out)
	}
	// The lines that fit on the file's last page are written whole, the
	// cut one is cut back off.
	before := readLines(t, path)
	for i, l := range before {
		var r AckedRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Offset != int64(i) {
			t.Fatalf("line %d on a full disk %q: %v", i+1, l, err)
		}
	}
	listed := int64(len(before)) - 1 // of the 300 added while full
	disk.Free(t)
	a.add(0, 600, key, 1000, lesson.AcksAll)
	out = a.flush()
	if out.Err != nil || out.Written == nil {
		t.Fatalf("flush after space returned: %+v", out)
	}
	lines := readLines(t, path)
	if len(lines) != len(before)+2 {
		t.Fatalf("log after space returned: %d lines, want %d, the marker, a record", len(lines), len(before))
	}
	var m AckedGapLine
	if err := json.Unmarshal([]byte(lines[len(before)]), &m); err != nil || m.NotLogged == nil {
		t.Fatalf("marker %q: %v", lines[len(before)], err)
	}
	g := m.NotLogged
	if g.Count != 301-listed || len(g.Partitions) != 2 || g.Partitions[0].FirstOffset != 1+listed && g.Partitions[1].FirstOffset != 1+listed ||
		g.Partitions[1].LastOffset != 500 || g.Partitions[0].Count+g.Partitions[1].Count != g.Count ||
		g.From.After(g.To) || g.Error == "" {
		t.Fatalf("marker %+v, want the %d records after offset %d", g, 301-listed, listed)
	}
	var r AckedRecord
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Offset != 600 {
		t.Fatalf("record after the marker %q: %v", lines[len(lines)-1], err)
	}
	t.Logf("full disk: %d of 301 records listed whole before the cut, the marker names %d: %+v", listed, g.Count, g.Partitions)
}

// TestAckedLogFullDiskBurst: a burst fills the buffer between two flushes,
// so add writes it out itself; its failure is said by the next flush, and
// the marker counts every record not listed.
func TestAckedLogFullDiskBurst(t *testing.T) {
	disk := fulldisk.Mount(t, 1<<20)
	path := filepath.Join(disk.Dir, "acked.ndjson")
	a, err := openAckedLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	disk.Fill(t)
	const n = 3000 // over ackedBuffer's worth of lines
	for i := range int64(n) {
		a.add(0, i, []byte("sensor-01"), 1+i, lesson.AcksAll)
	}
	if out := a.flush(); !errors.Is(out.Err, syscall.ENOSPC) || !out.Failed {
		t.Fatalf("flush after a burst on a full disk: %+v", out)
	}
	disk.Free(t)
	out := a.flush()
	listed := int64(len(readLines(t, path))) - 1
	if out.Err != nil || out.Written == nil || out.Written.Count+listed != n {
		t.Fatalf("after space returned: %+v, %d lines listed, want the marker to count the rest of %d", out, listed, n)
	}
}

// TestAckedLogEndsCutLine: a log that ends in a cut line (a producer killed
// mid-write) gets the next producer's lines on lines of their own.
func TestAckedLogEndsCutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acked.ndjson")
	if err := os.WriteFile(path, []byte(`{"partition":0,"offset":1,"key":"s","timestamp":1,"acks":"all"}`+"\n"+`{"partition":0,"off`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := openAckedLog(path)
	if err != nil {
		t.Fatal(err)
	}
	a.add(0, 2, []byte("s"), 2, lesson.AcksAll)
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	var r AckedRecord
	if len(lines) != 3 || json.Unmarshal([]byte(lines[2]), &r) != nil || r.Offset != 2 {
		t.Fatalf("log %q, want the cut line alone and the new record whole", lines)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
