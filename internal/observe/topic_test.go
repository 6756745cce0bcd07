package observe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
)

// A topic grows and never shrinks; deleted, its name is free again at
// once for a topic of another count; deleting a missing topic is no error.
func TestAddPartitionsAndDeleteTopic(t *testing.T) {
	addr, topic := embeddedtest.Broker(t, "sensor-data")
	o, err := NewOffsets(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := o.AddPartitions(ctx, topic, 4); err != nil {
		t.Fatal(err)
	}
	if parts, err := o.Partitions(ctx, topic); err != nil || len(parts) != 4 {
		t.Fatalf("after growing to 4: %v %v", parts, err)
	}
	if err := o.AddPartitions(ctx, topic, 3); !errors.Is(err, kerr.InvalidPartitions) {
		t.Errorf("shrink to 3: %v, want INVALID_PARTITIONS", err)
	}
	// The current count: Apache Kafka refuses it, the embedded broker
	// takes it as nothing to do; either way nothing changes.
	if err := o.AddPartitions(ctx, topic, 4); err != nil && !errors.Is(err, kerr.InvalidPartitions) {
		t.Errorf("grow to 4 of 4: %v", err)
	}
	if parts, err := o.Partitions(ctx, topic); err != nil || len(parts) != 4 {
		t.Fatalf("still 4: %v %v", parts, err)
	}
	if err := o.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Partitions(ctx, topic); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("after the deletion: %v", err)
	}
	if created, err := o.EnsureTopic(ctx, topic, 3); err != nil || !created {
		t.Fatalf("create again: %v %v", created, err)
	}
	if parts, err := o.Partitions(ctx, topic); err != nil || len(parts) != 3 {
		t.Fatalf("created again with 3: %v %v", parts, err)
	}
	if err := o.DeleteTopic(ctx, topic+"-missing"); err != nil {
		t.Fatalf("deleting a missing topic: %v", err)
	}
}
