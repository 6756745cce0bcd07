package observe

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestLayoutSeesALeaderMove: on a three-node kfake cluster, a partition's
// leader moved by the cluster shows in the very next Layout (an admin
// request each time, not a cached metadata view).
func TestLayoutSeesALeaderMove(t *testing.T) {
	const topic = "sensor-data"
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o, err := NewOffsets(c.ListenAddrs()[0], testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := context.Background()
	before, err := o.Layout(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("three kfake nodes: %+v", before.Partitions)
	from := before.Partitions[1].Leader
	to := (from + 1) % 3
	if err := c.MoveTopicPartition(topic, 1, to); err != nil {
		t.Fatal(err)
	}
	moved := time.Now()
	after, err := o.Layout(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after moving p1 %d → %d (read in %s): %+v", from, to, time.Since(moved), after.Partitions)
	if got := after.Partitions[1].Leader; got != to {
		t.Errorf("p1 leader %d right after the move, want %d", got, to)
	}
	if after.Partitions[0].Leader != before.Partitions[0].Leader {
		t.Errorf("p0 moved too: %+v", after.Partitions)
	}
}
