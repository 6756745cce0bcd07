package e2e

import (
	"cmp"
	"encoding/json"
	"hash/crc32"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// movedKey is one moved_keys entry of --report, as its contract says.
type movedKey struct {
	Sensor      string `json:"sensor"`
	From        int32  `json:"from"`
	To          int32  `json:"to"`
	FirstOffset int64  `json:"first_offset"`
}

// TestPartitionsAddedMovesKeys grows the topic from 3 to 4 partitions
// (add-partitions) while the producer publishes, then reads the topic back
// on its own. The sensors whose records moved are exactly those whose
// CRC-32 modulo 4 differs from modulo 3 (computed here, not taken from the
// partitioner), each from its modulo-3 partition to its modulo-4 one with
// every record from its first one there on in the new partition and none
// after it in the old; they all moved at one refresh of the producer's
// metadata; the others stayed; and the report's moved_keys says the same,
// with each sensor's first offset in its new partition.
func TestPartitionsAddedMovesKeys(t *testing.T) {
	d := newDashboard(t)
	const interval = 100 * time.Millisecond
	d.startHeadless(`
wait-caught-up 60s
wait 1s
add-partitions 4
wait 5s
pause producer
wait-caught-up 60s
quit
`, "--interval", interval.String(), "--seed", "13")
	if code := d.waitExit(3 * time.Minute); code != 0 {
		d.dumpLogs()
		t.Fatalf("dashboard exited %d\n%s", code, Tail(d.stderr(), 40))
	}
	b, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		MovedKeys []movedKey `json:"moved_keys"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.MovedKeys == nil {
		t.Fatalf("report without moved_keys (%v):\n%s", err, b)
	}
	r := d.readReport()
	if r.Keys == nil || len(r.Keys.Scattered) != 0 {
		t.Fatalf("the report's keys: %+v", r.Keys)
	}
	tp := d.readRunTruth().Topic
	if len(tp.HighWatermarks) != 4 {
		t.Fatalf("the topic read back has %d partitions, want 4", len(tp.HighWatermarks))
	}
	want, switched := checkMovedInTopic(t, tp)
	if len(want) == 0 || len(want) == 10 {
		t.Fatalf("%d of 10 sensors moved: the lesson needs some to move and some to stay", len(want))
	}
	if !slices.Equal(rep.MovedKeys, want) {
		t.Fatalf("moved_keys %+v\nthe topic read back says %+v", rep.MovedKeys, want)
	}
	// One refresh of the producer's metadata moved them all: their first
	// records in the new layout are within two rounds of each other.
	slices.Sort(switched)
	if spread := time.Duration(switched[len(switched)-1]-switched[0]) * time.Millisecond; spread > 2*interval {
		t.Errorf("the moved sensors switched %s apart, not at one metadata refresh", spread)
	}
	t.Logf("%d records in 4 partitions; moved: %+v", tp.Count(), want)
}

// crc32Partition is CRC-32 (IEEE) of the key modulo n, written here again.
func crc32Partition(key string, n int) int32 {
	return int32(crc32.ChecksumIEEE([]byte(key)) % uint32(n))
}

// checkMovedInTopic checks every sensor's records in tp against CRC-32
// modulo 3 and 4 and returns the moves the topic shows, by sensor, and the
// timestamp of each moved sensor's first record in its new partition.
func checkMovedInTopic(t *testing.T, tp Topic) (moves []movedKey, switched []int64) {
	t.Helper()
	type rec struct {
		partition int32
		offset    int64
		ts        int64
	}
	bySensor := map[string][]rec{}
	for _, r := range tp.Records {
		m, err := telemetry.Decode(r.Key, r.Value)
		if err != nil {
			t.Fatalf("p%d@%d: %v", r.Partition, r.Offset, err)
		}
		bySensor[m.SensorID] = append(bySensor[m.SensorID], rec{r.Partition, r.Offset, m.Timestamp})
	}
	ids := make([]string, 0, len(bySensor))
	for id := range bySensor {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		rs := bySensor[id]
		from, to := crc32Partition(id, 3), crc32Partition(id, 4)
		// In the key's order: by its own timestamps, which only grow.
		slices.SortFunc(rs, func(a, b rec) int { return cmp.Compare(a.ts, b.ts) })
		first := slices.IndexFunc(rs, func(r rec) bool { return r.partition != from })
		if from == to {
			if first >= 0 {
				t.Errorf("%s hashes to p%d with 3 and with 4 partitions, has a record at p%d@%d", id, from, rs[first].partition, rs[first].offset)
			}
			continue
		}
		if first < 0 {
			t.Errorf("%s should move p%d→p%d: no record outside p%d", id, from, to, from)
			continue
		}
		for _, r := range rs[first:] {
			if r.partition != to {
				t.Errorf("%s: record at p%d@%d (ts %d) after its first in p%d (ts %d)", id, r.partition, r.offset, r.ts, to, rs[first].ts)
			}
		}
		moves = append(moves, movedKey{Sensor: id, From: from, To: to, FirstOffset: rs[first].offset})
		switched = append(switched, rs[first].ts)
	}
	if t.Failed() {
		t.FailNow()
	}
	return moves, switched
}
