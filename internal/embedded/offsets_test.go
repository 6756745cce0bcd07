package embedded

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kgocfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// --offsets-retention reaches kfake: a group without members loses its
// commits once the retention has passed since them, not before.
func TestBrokerOffsetsRetention(t *testing.T) {
	const retention = time.Second
	r := startRole(t, "broker", "kafka", func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
		return RunBroker(ctx, BrokerConfig{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Topic: testTopic, Partitions: testParts,
			OffsetsRetention: retention}, em, log)
	})
	cl, err := kgo.NewClient(kgocfg.Client(r.addr, "krl-test-offsets", nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const group = "krl-test-expiring"
	var offsets kadm.Offsets
	offsets.Add(kadm.Offset{Topic: testTopic, Partition: 1, At: 42})
	committedAt := time.Now()
	if err := adm.CommitAllOffsets(ctx, group, offsets); err != nil {
		t.Fatalf("commit: %v", err)
	}
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for {
		res, err := adm.FetchOffsets(ctx, group)
		if ctx.Err() != nil {
			t.Fatalf("the commit is still there %s after it was made (retention %s)", time.Since(committedAt), retention)
		}
		o, ok := res.Lookup(testTopic, 1)
		if err == nil && ok && o.At == 42 {
			select {
			case <-poll.C:
			case <-ctx.Done():
			}
			continue
		}
		if gone := time.Since(committedAt); gone < retention {
			t.Fatalf("the commit was gone %s after it was made, before the retention (%s): %v %+v", gone, retention, err, o)
		}
		t.Logf("commit gone %s after it was made (retention %s, check every %s)", time.Since(committedAt).Round(10*time.Millisecond),
			retention, kafkacfg.OffsetsRetentionCheck(retention))
		return
	}
}
