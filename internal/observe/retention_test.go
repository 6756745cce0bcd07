package observe

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
)

// A topic given a retention of a second loses its records: Watermarks
// shows the log start reach the log end, and it stays put when new
// records come (they are not old yet).
func TestRetentionMovesTheLogStart(t *testing.T) {
	addr, topic := embeddedtest.Broker(t, "sensor-data")
	o, err := NewOffsets(addr, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produceTo(t, addr, topic, map[int32]int{0: 10})
	starts, ends, err := o.Watermarks(ctx, topic)
	if err != nil || starts[0] != 0 || ends[0] != 10 {
		t.Fatalf("before: starts %v ends %v err %v", starts, ends, err)
	}
	if err := o.AlterTopicConfig(ctx, topic, map[string]string{"retention.ms": "1000", "segment.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	for starts[0] != 10 {
		if ctx.Err() != nil {
			t.Fatalf("log start still %d after %v (ends %v)", starts[0], 30*time.Second, ends)
		}
		time.Sleep(100 * time.Millisecond) // poll interval, not synchronisation
		if starts, ends, err = o.Watermarks(ctx, topic); err != nil {
			t.Fatal(err)
		}
	}
	if ends[0] != 10 || starts[1] != 0 || starts[2] != 0 {
		t.Fatalf("after: starts %v ends %v", starts, ends)
	}
}
