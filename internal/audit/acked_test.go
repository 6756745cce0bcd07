package audit

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestAckCheckByContent stages what a lost acks=1 write looks like: the
// producer was told offsets 3 and 4 of partition 0 held sensor-a's
// readings at 4000 and 5000; the leader died, and the new one gave those
// offsets to the next readings (6000, 7000). Set against the topic by
// offset, every offset is there; by content, two writes are lost.
func TestAckCheckByContent(t *testing.T) {
	l := NewLedger()
	for i, ts := range []int64{1000, 2000, 3000, 6000, 7000} {
		l.Add(0, int64(i), []byte("sensor-a"), encode(t, "sensor-a", ts, float64(i), float64(i)))
	}
	l.Add(1, 0, []byte("sensor-b"), encode(t, "sensor-b", 1000, 1, 1))
	c := NewAckCheck()
	c.Add(
		Acked{Partition: 0, Offset: 0, Key: "sensor-a", Timestamp: 1000, Acks: "1"},
		Acked{Partition: 0, Offset: 3, Key: "sensor-a", Timestamp: 4000, Acks: "1"},
		Acked{Partition: 1, Offset: 0, Key: "sensor-b", Timestamp: 1000, Acks: "1"},
		Acked{Partition: 0, Offset: 4, Key: "sensor-a", Timestamp: 5000, Acks: "1"},
		// The new leader's records, acknowledged at the offsets reused.
		Acked{Partition: 0, Offset: 3, Key: "sensor-a", Timestamp: 6000, Acks: "1"},
		Acked{Partition: 0, Offset: 4, Key: "sensor-a", Timestamp: 7000, Acks: "1"},
		// Not read yet.
		Acked{Partition: 0, Offset: 5, Key: "sensor-a", Timestamp: 8000, Acks: "1"},
	)
	s := c.Check(l.Snapshot())
	want := []Acked{
		{Partition: 0, Offset: 3, Key: "sensor-a", Timestamp: 4000, Acks: "1"},
		{Partition: 0, Offset: 4, Key: "sensor-a", Timestamp: 5000, Acks: "1"},
	}
	if !slices.Equal(s.Missing, want) || s.Acknowledged != 7 || s.Held != 4 || s.Pending != 1 {
		t.Fatalf("summary %+v, want missing %+v, 7 acknowledged, 4 held, 1 pending", s, want)
	}
	if s.Latest[0].Timestamp != 8000 || s.Latest[1].Timestamp != 1000 {
		t.Fatalf("latest %+v", s.Latest)
	}
	// The round before the latest: partition 1 has had one round only.
	if r, ok := s.EarlierRound[0]; !ok || r.Timestamp != 7000 {
		t.Fatalf("earlier round %+v", s.EarlierRound)
	}
	if _, ok := s.EarlierRound[1]; ok {
		t.Fatalf("earlier round of partition 1 %+v", s.EarlierRound)
	}
	// The topic reads on: the pending one lands where it was told.
	l.Add(0, 5, []byte("sensor-a"), encode(t, "sensor-a", 8000, 5, 5))
	if s = c.Check(l.Snapshot()); s.Pending != 0 || s.Held != 5 || len(s.Missing) != 2 {
		t.Fatalf("after reading on: %+v", s)
	}
}

// TestAckCheckFindsAWriteElsewhere: a record acknowledged at one offset and
// read at another (a retry written again after a lost acknowledgement) is
// held: only its key and timestamp count.
func TestAckCheckFindsAWriteElsewhere(t *testing.T) {
	l := NewLedger()
	l.Add(0, 0, []byte("s"), encode(t, "s", 1000, 1, 1))
	l.Add(0, 1, []byte("s"), encode(t, "s", 3000, 3, 3))
	l.Add(0, 2, []byte("s"), encode(t, "s", 2000, 2, 2)) // behind 3000: invalid, still in the topic
	l.Add(2, 0, []byte("s"), encode(t, "s", 4000, 4, 4)) // another partition of the key
	c := NewAckCheck()
	c.Add(
		Acked{Partition: 0, Offset: 1, Key: "s", Timestamp: 2000},
		Acked{Partition: 0, Offset: 0, Key: "s", Timestamp: 4000},
		Acked{Partition: 0, Offset: 2, Key: "s", Timestamp: 9000},
	)
	s := c.Check(l.Snapshot())
	if s.Held != 2 || len(s.Missing) != 1 || s.Missing[0].Timestamp != 9000 {
		t.Fatalf("summary %+v", s)
	}
	// A missing write that turns up later is held from then on.
	l.Add(0, 3, []byte("s"), encode(t, "s", 9000, 9, 9))
	if s = c.Check(l.Snapshot()); s.Held != 3 || len(s.Missing) != 0 {
		t.Fatalf("after it turned up: %+v", s)
	}
}

// TestAckCheckAgainstNaiveSearch: random topics with lost and reused
// offsets, the check against a search of every record read.
func TestAckCheckAgainstNaiveSearch(t *testing.T) {
	for seed := range uint64(50) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		l := NewLedger()
		type key struct {
			sensor string
			ts     int64
		}
		in := map[key]bool{}
		next := map[int32]int64{}
		ts := map[string]int64{}
		var acked []Acked
		for range 600 {
			p := int32(rnd.IntN(3))
			id := fmt.Sprintf("sensor-%d", rnd.IntN(5))
			ts[id] += 1 + int64(rnd.IntN(1500))
			a := Acked{Partition: p, Offset: next[p], Key: id, Timestamp: ts[id]}
			if rnd.IntN(10) == 0 {
				acked = append(acked, a) // lost: acknowledged, its offset goes to the next record
				continue
			}
			l.Add(p, next[p], []byte(id), encode(t, id, ts[id], float64(ts[id]), float64(ts[id])))
			in[key{id, ts[id]}] = true
			next[p]++
			if rnd.IntN(4) != 0 {
				acked = append(acked, a)
			}
		}
		c := NewAckCheck()
		half := len(acked) / 2
		c.Add(acked[:half]...)
		c.Check(l.Snapshot())
		c.Add(acked[half:]...)
		s := c.Check(l.Snapshot())
		var want []Acked
		for _, a := range acked {
			if a.Offset < next[a.Partition] && !in[key{a.Key, a.Timestamp}] {
				want = append(want, a)
			}
		}
		slices.SortFunc(want, compareAcked)
		if !slices.Equal(s.Missing, want) || s.Held+int64(len(s.Missing))+s.Pending != int64(len(acked)) {
			t.Fatalf("seed %d: missing %v\nwant %v\nsummary held %d pending %d of %d", seed, s.Missing, want, s.Held, s.Pending, len(acked))
		}
	}
}

// TestContentLogBlocks: lookups by offset and by timestamp across block
// boundaries, and a view that stays valid while the log grows.
func TestContentLogBlocks(t *testing.T) {
	var l contentLog
	for i := range int64(1000) {
		l.add(content{offset: 3 * i, timestamp: 1000*i + i%7})
	}
	v := l.view()
	l.add(content{offset: 3000, timestamp: 5})
	for i := range int64(1000) {
		if ts, ok := v.at(3 * i); !ok || ts != 1000*i+i%7 {
			t.Fatalf("at(%d) = %d %v", 3*i, ts, ok)
		}
		if _, ok := v.at(3*i + 1); ok {
			t.Fatalf("at(%d) found a record between two", 3*i+1)
		}
		if !v.holds(1000*i + i%7) {
			t.Fatalf("holds(%d) false", 1000*i+i%7)
		}
	}
	if v.holds(5) || v.holds(999_999_999) {
		t.Fatal("the view holds what was added after it, or what never was")
	}
	if _, ok := v.at(3000); ok {
		t.Fatal("the view sees a record added after it")
	}
	if !l.view().holds(5) {
		t.Fatal("a new view misses the last record")
	}
}

// BenchmarkContentLog is what the acknowledged-writes check costs the audit
// per record: appending a record's content (10 sensors over 3 partitions,
// one reading a second each: an offset step of about 3 and a timestamp step
// of 1000 ms per series), in time and in bytes kept (bytes/record).
func BenchmarkContentLog(b *testing.B) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	logs := make([]contentLog, 10)
	for i := range b.N {
		s := i % 10
		logs[s].add(content{offset: int64(i/10*3 + s%3), timestamp: 1_796_000_000_000 + int64(i/10)*1000 + int64(i%7)})
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "bytes/record")
	runtime.KeepAlive(logs)
}

// BenchmarkAckCheck is the check's cost per acknowledged record on a
// caught-up audit: each is found at its offset and forgotten.
func BenchmarkAckCheck(b *testing.B) {
	l := NewLedger()
	const n = 100_000
	recs := make([]Acked, n)
	for i := range n {
		id := fmt.Sprintf("sensor-%02d", i%10)
		p := int32(i % 3)
		off := int64(i / 3)
		ts := int64(1_796_000_000_000 + i)
		l.Add(p, off, []byte(id), encode(b, id, ts, float64(i), float64(i)))
		recs[i] = Acked{Partition: p, Offset: off, Key: id, Timestamp: ts, Acks: "all"}
	}
	t := l.Snapshot()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		c := NewAckCheck()
		c.Add(recs[:min(n, b.N-i)]...)
		if s := c.Check(t); len(s.Missing) != 0 {
			b.Fatal(s.Missing[0])
		}
	}
}

// TestAckCheckNoOffset: records sent with acks=0 have no offset. One the
// topic does not hold is lost only once a record the producer sent after
// it, in its partition, is found; until then it is pending.
func TestAckCheckNoOffset(t *testing.T) {
	none := func(p int32, key string, ts int64) Acked {
		return Acked{Partition: p, Offset: NoOffset, Key: key, Timestamp: ts, Acks: "0"}
	}
	l := NewLedger()
	l.Add(0, 0, []byte("a"), encode(t, "a", 1000, 1, 1))
	l.Add(1, 0, []byte("c"), encode(t, "c", 1500, 1, 1))
	c := NewAckCheck()
	c.Add(
		none(0, "a", 1000),
		none(0, "b", 1000), // lost: the broker never stored it
		none(1, "c", 1500), // sent after b, in another partition
		none(0, "a", 2000),
		none(0, "b", 2000),
	)
	s := c.Check(l.Snapshot())
	if len(s.Missing) != 0 || s.Held != 2 || s.Pending != 3 || s.PendingUnplaced != 3 || s.Unconfirmed != 5 || s.Acknowledged != 5 {
		t.Fatalf("before a record sent after b@1000 is read in its partition: %+v", s)
	}
	// The audit reads a@2000: b@1000, between two held records, is lost;
	// b@2000, with nothing sent after it, is still pending.
	l.Add(0, 1, []byte("a"), encode(t, "a", 2000, 2, 2))
	s = c.Check(l.Snapshot())
	if want := []Acked{none(0, "b", 1000)}; !slices.Equal(s.Missing, want) || s.Held != 3 || s.Pending != 1 || s.PendingUnplaced != 1 {
		t.Fatalf("after a@2000 is read: %+v, want missing %v, 3 held, 1 pending", s, want)
	}
	// The last one lands.
	l.Add(0, 2, []byte("b"), encode(t, "b", 2000, 2, 2))
	if s = c.Check(l.Snapshot()); len(s.Missing) != 1 || s.Held != 4 || s.Pending != 0 {
		t.Fatalf("after b@2000 is read: %+v", s)
	}
}

// TestAckCheckNoOffsetBySendOrder: what was sent after a record is what
// the log lists after it, whatever the stamps say. After a history burst
// one sensor's stamps run ahead of another's: x@5000 was sent before
// y@3000, and finding it says nothing about y.
func TestAckCheckNoOffsetBySendOrder(t *testing.T) {
	l := NewLedger()
	l.Add(0, 0, []byte("x"), encode(t, "x", 5000, 1, 1))
	c := NewAckCheck()
	c.Add(
		Acked{Partition: 0, Offset: NoOffset, Key: "x", Timestamp: 5000, Acks: "0"},
		Acked{Partition: 0, Offset: NoOffset, Key: "y", Timestamp: 3000, Acks: "0"},
	)
	if s := c.Check(l.Snapshot()); len(s.Missing) != 0 || s.Pending != 1 {
		t.Fatalf("y@3000, sent after the only record read: %+v, want pending", s)
	}
	// A write acknowledged with an offset, sent after y and found, settles
	// it: y is lost.
	c.Add(Acked{Partition: 0, Offset: 1, Key: "x", Timestamp: 5001, Acks: "1"})
	l.Add(0, 1, []byte("x"), encode(t, "x", 5001, 2, 2))
	s := c.Check(l.Snapshot())
	if len(s.Missing) != 1 || s.Missing[0].Key != "y" || s.Pending != 0 || s.Held != 2 || s.Unconfirmed != 2 {
		t.Fatalf("after x@5001 (acks=1) is read: %+v", s)
	}
}
