package current

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// rec is a record of a generated topic.
type rec struct {
	p          int32
	off        int64
	key, value []byte
}

// history is a topic of three partitions in the order a consumer reads
// it (partitions interleaved, each in offset order), with poison records:
// odometers going backwards, values that are not JSON, keys that do not
// match. sensor-9 is written to two partitions.
func history(rng *rand.Rand, n int) []rec {
	type sensor struct {
		id    string
		p     int32
		hours float64
	}
	sensors := []*sensor{}
	for i := range 9 {
		sensors = append(sensors, &sensor{id: fmt.Sprintf("sensor-%d", i), p: int32(i % 3)})
	}
	next := map[int32]int64{}
	var out []rec
	for range n {
		s := sensors[rng.IntN(len(sensors))]
		p := s.p
		if s.id == "sensor-8" && rng.IntN(2) == 0 {
			p = (p + 1) % 3
		}
		var value []byte
		key := s.id
		switch rng.IntN(12) {
		case 0:
			value = []byte(`{"sensor_id":`)
		case 1:
			m := telemetry.Message{SensorID: s.id, Timestamp: 1, Odometry: telemetry.Odometry{HoursTot: max(0, s.hours-5), KmTot: 1}}
			value, _ = telemetry.Encode(m)
		case 2:
			key = "someone-else"
			fallthrough
		default:
			s.hours += rng.Float64() * 3
			m := telemetry.Message{SensorID: s.id, Timestamp: int64(len(out) + 1), Odometry: telemetry.Odometry{HoursTot: s.hours, KmTot: s.hours * 10}}
			value, _ = telemetry.Encode(m)
		}
		out = append(out, rec{p: p, off: next[p], key: []byte(key), value: value})
		next[p]++
	}
	return out
}

// applyAll applies recs and returns where the invalid ones were.
func applyAll(s *state, recs []rec) map[[2]int64]bool {
	invalid := map[[2]int64]bool{}
	for _, r := range recs {
		if apply(s, r.p, r.off, r.key, r.value) != nil {
			invalid[[2]int64{int64(r.p), r.off}] = true
		}
	}
	return invalid
}

// judgedAlike fails when a restored state found a record invalid that the
// full replay did not: its timeline would say so.
func judgedAlike(t *testing.T, what string, got, want map[[2]int64]bool) {
	t.Helper()
	for at := range got {
		if !want[at] {
			t.Fatalf("%s: the record at %d/%d was judged invalid, the replay took it", what, at[0], at[1])
		}
	}
}

// after is the records a restored state reads: each partition from the
// restored offsets on (in the same order).
func after(recs []rec, through map[int32]int64) []rec {
	var out []rec
	for _, r := range recs {
		if r.off >= through[r.p] {
			out = append(out, r)
		}
	}
	return out
}

// A state saved to a snapshot at any moment and restored rebuilds, from
// what follows, exactly the state of a full replay, invalid records
// judged the same.
func TestSnapshotRebuildsTheReplaysState(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := history(rng, 3000)
	full := newState("g")
	invalid := applyAll(full, recs)
	want := full.view()
	path := filepath.Join(t.TempDir(), "snap")
	for range 50 {
		k := rng.IntN(len(recs) + 1)
		first := newState("g")
		applyAll(first, recs[:k])
		c := first.cut()
		if err := writeSnapshot(path, snapshot{Version: snapshotVersion, Topic: "t", TakenAt: time.Now(),
			Through: c.through, Sensors: c.sensors, References: c.refs}, nil); err != nil {
			t.Fatal(err)
		}
		s, err := loadSnapshot(path)
		if err != nil {
			t.Fatal(err)
		}
		second := newState("g")
		second.restore(restored{cut: cut{sensors: s.Sensors, refs: s.References, through: s.Through}})
		judgedAlike(t, fmt.Sprintf("restored at %d", k), applyAll(second, after(recs, s.Through)), invalid)
		got := second.view()
		if !reflect.DeepEqual(got.Sensors, want.Sensors) {
			t.Fatalf("restored at %d: sensors differ from the replay's:\n%v\n%v", k, got.Sensors, want.Sensors)
		}
		if first.invalid+second.invalid != full.invalid {
			t.Fatalf("restored at %d: %d + %d invalid, the replay %d", k, first.invalid, second.invalid, full.invalid)
		}
	}
}

// A changelog published at random moments, its last publication cut
// short by a crash anywhere, compacted or not, rebuilds exactly the state
// of a full replay.
func TestChangelogRebuildsTheReplaysState(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := history(rng, 3000)
	full := newState("g")
	invalid := applyAll(full, recs)
	want := full.view()
	for round := range 200 {
		st := newState("g")
		pb := newPublisher("", "t", nil)
		var log []record
		crashAt := rng.IntN(len(recs) + 1)
		for i := 0; i < crashAt; {
			step := 1 + rng.IntN(200)
			applyAll(st, recs[i:min(i+step, crashAt)])
			i += step
			pub, ok, err := pb.plan(st.cut(), "id")
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			all := append(append([]record(nil), pub.values...), pub.mark)
			if i >= crashAt { // the crash cuts the last publication anywhere
				log = append(log, all[:rng.IntN(len(all)+1)]...)
				break
			}
			log = append(log, all...)
			pb.done(st.cut(), pub)
		}
		if rng.IntN(2) == 0 {
			log = compacted(log)
		}
		var cl changelog
		cl.values = map[string]changelogValue{}
		for _, r := range log {
			if err := cl.take([]byte(r.key), r.value); err != nil {
				t.Fatal(err)
			}
		}
		if cl.mark == nil {
			continue // a start falls back to a replay
		}
		r := cl.restored("id")
		second := newState("g")
		second.restore(r)
		judgedAlike(t, fmt.Sprintf("round %d", round), applyAll(second, after(recs, r.through)), invalid)
		if got := second.view(); !reflect.DeepEqual(got.Sensors, want.Sensors) {
			t.Fatalf("round %d (crash at %d, %d changelog records): sensors differ from the replay's:\n%v\n%v",
				round, crashAt, len(log), got.Sensors, want.Sensors)
		}
	}
}

// compacted keeps each key's latest record, in order.
func compacted(log []record) []record {
	last := map[string]int{}
	for i, r := range log {
		last[r.key] = i
	}
	var out []record
	for i, r := range log {
		if last[r.key] == i {
			out = append(out, r)
		}
	}
	return out
}

// A changelog value of an earlier topic of the same name is not restored.
func TestChangelogIgnoresAnEarlierTopic(t *testing.T) {
	cl := changelog{values: map[string]changelogValue{
		"a": {TopicID: "old"},
		"b": {TopicID: "new"},
	}, mark: &changelogMark{TopicID: "new"}}
	if r := cl.restored("new"); len(r.sensors) != 1 {
		t.Fatalf("restored %d sensors, want the new topic's one", len(r.sensors))
	}
}

// A snapshot write cut short leaves the previous snapshot whole; a file
// cut short, changed or of another format is refused with the reason.
func TestSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "consumer-current.snapshot")
	first := snapshot{Version: snapshotVersion, Topic: "t", Through: map[int32]int64{0: 5}}
	if err := writeSnapshot(path, first, nil); err != nil {
		t.Fatal(err)
	}
	second := first
	second.Through = map[int32]int64{0: 9}
	// A crash in the middle of the write is a write that never finishes.
	errCrash := fmt.Errorf("crashed")
	func() {
		defer func() { _ = recover() }()
		_ = writeSnapshot(path, second, func() { panic(errCrash) })
	}()
	got, err := loadSnapshot(path)
	if err != nil || got.Through[0] != 5 {
		t.Fatalf("after a write cut short: %+v, %v; want the previous snapshot", got, err)
	}
	if temps, _ := filepath.Glob(path + ".tmp-*"); len(temps) != 1 {
		t.Fatalf("temporary files %v, want the one the crash left", temps)
	}
	removeStaleTemps(path)
	if temps, _ := filepath.Glob(path + ".tmp-*"); len(temps) != 0 {
		t.Fatalf("temporary files %v left", temps)
	}

	b, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"cut short":    b[:len(b)/2],
		"changed":      []byte(strings.Replace(string(b), `"0":5`, `"0":6`, 1)),
		"not a file":   []byte("hello"),
		"other format": mustEncode(t, snapshot{Version: snapshotVersion + 1}),
	} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadSnapshot(path); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := loadSnapshot(filepath.Join(dir, "none")); err != errNoSnapshot {
		t.Errorf("missing file: %v", err)
	}
}

func mustEncode(t *testing.T, s snapshot) []byte {
	b, err := encodeSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestForeign(t *testing.T) {
	spans := map[int32]span{0: {0, 10}, 1: {2, 10}}
	for _, c := range []struct {
		topic, id string
		through   map[int32]int64
		want      string
	}{
		{"t", "A", map[int32]int64{0: 10, 1: 3}, ""},
		{"t", "", map[int32]int64{0: 3}, ""},
		{"u", "A", nil, "of topic u, not t"},
		{"t", "B", nil, "earlier topic t (id B, now A)"},
		{"t", "A", map[int32]int64{0: 11}, "up to offset 11, the topic ends at 10"},
		{"t", "A", map[int32]int64{1: 1}, "the topic now begins at 2"},
		{"t", "A", map[int32]int64{2: 1}, "partition 2, the topic has not"},
	} {
		got := foreign("snapshot", c.topic, c.id, "t", "A", c.through, spans)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
	}
}
