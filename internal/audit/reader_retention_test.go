package audit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
	"github.com/kafka-recovery-lab/krl/internal/observe"
)

// A reader started on a log whose records retention deleted reads nothing
// of them, says which offsets it could not read, and is caught up at the
// log start; it reads what comes after, the skipped range unchanged.
func TestReaderStartsOnATrimmedLog(t *testing.T) {
	addr, topicName := embeddedtest.Broker(t, topic)
	pr := newProducerTo(t, addr, topicName)
	var kvs [][2][]byte
	for i := range 20 {
		kvs = append(kvs, [2][]byte{[]byte("sensor-01"), encode(t, "sensor-01", int64(1000+i*1000), float64(i)/1000, float64(i)/1000)})
	}
	recs := pr.send(kvs)
	part := recs[0].partition
	o, err := observe.NewOffsets(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.AlterTopicConfig(ctx, topicName, map[string]string{"retention.ms": "1000", "segment.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	for {
		starts, ends, err := o.Watermarks(ctx, topicName)
		if err != nil {
			t.Fatal(err)
		}
		if starts[part] == 20 && ends[part] == 20 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("p%d: log start %d, end %d", part, starts[part], ends[part])
		}
		time.Sleep(100 * time.Millisecond) // poll interval, not synchronisation
	}
	// No new record may be deleted while the reader reads on.
	if err := o.AlterTopicConfig(ctx, topicName, map[string]string{"retention.ms": "-1"}); err != nil {
		t.Fatal(err)
	}

	r, stop := runReaderOf(t, addr, topicName)
	defer stop()
	want := []OffsetRange{{Partition: part, First: 0, Last: 19}}
	got := awaitSnapshot(t, r, 20*time.Second, "caught up at the log start", func(tr Truth) bool { return tr.CaughtUp() })
	if got.Read() != 0 || !slices.Equal(got.Skipped(), want) {
		t.Fatalf("read %d, skipped %+v, want 0 and %+v", got.Read(), got.Skipped(), want)
	}
	pr.send([][2][]byte{{[]byte("sensor-01"), encode(t, "sensor-01", 30_000, 0.03, 0.03)}})
	got = awaitSnapshot(t, r, 20*time.Second, "the record after the log start", func(tr Truth) bool { return tr.Read() == 1 && tr.CaughtUp() })
	if !slices.Equal(got.Skipped(), want) || got.Valid != 1 {
		t.Fatalf("after a new record: skipped %+v, valid %d", got.Skipped(), got.Valid)
	}
}
