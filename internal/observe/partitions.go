package observe

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// PartitionInfo is one partition's placement as the cluster's metadata
// says: the node ids of its leader (-1: none), replicas and in-sync
// replicas.
type PartitionInfo struct {
	Partition int32
	Leader    int32
	Replicas  []int32
	ISR       []int32
	// Preferred: the first replica of the assignment, the leader the
	// controller hands the partition back to (-1: no replicas). Replicas
	// and ISR are sorted; this keeps the assignment's order's point.
	Preferred int32
}

// Layout is a topic's placement: its partitions, in order, and the
// topic's min.insync.replicas (0 when the broker did not say).
type Layout struct {
	Partitions []PartitionInfo
	MinISR     int
	// MinISRErr: why MinISR is unknown (the describe-configs request
	// failed); the partitions are good regardless.
	MinISRErr error
}

// Layout reads topic's partitions' leaders, replicas and ISRs with a
// metadata request to a broker that is up (see topicMetadata: not
// DescribeTopics, which waits for a controller that may be the broker just
// killed) and its min.insync.replicas with DescribeConfigs; when that fails
// (it too goes to the controller) the last value read is kept.
func (o *Offsets) Layout(ctx context.Context, topic string) (Layout, error) {
	release, err := o.use()
	if err != nil {
		return Layout{}, err
	}
	defer release()
	ctx, cancel, left := bounded(ctx)
	defer cancel()
	t, err := o.topicMetadata(topic, left)
	if err != nil {
		return Layout{}, err
	}
	var out Layout
	for _, p := range t.Partitions {
		pi := PartitionInfo{Partition: p.ID, Leader: p.Leader, Replicas: sortedIDs(p.Replicas), ISR: sortedIDs(p.Isrs), Preferred: -1}
		if len(p.Replicas) > 0 {
			pi.Preferred = p.Replicas[0]
		}
		if pi.Leader < 0 || p.Error.Code() == kafka.ErrLeaderNotAvailable {
			pi.Leader = -1
		}
		out.Partitions = append(out.Partitions, pi)
	}
	sort.Slice(out.Partitions, func(i, j int) bool { return out.Partitions[i].Partition < out.Partitions[j].Partition })
	// min.insync.replicas is read once per topic (the lab sets it when it
	// creates the topic): DescribeConfigs goes to the controller librdkafka
	// knows, and while that broker is dead each call waited out the whole
	// deadline, and the poll, which waits twice a slow call, went slow too.
	o.minISRMu.Lock()
	known, ok := o.minISRKnown[topic]
	o.minISRMu.Unlock()
	if ok {
		out.MinISR = known
		return out, nil
	}
	out.MinISR, out.MinISRErr = o.minISR(ctx, topic)
	if out.MinISRErr == nil && out.MinISR > 0 {
		o.minISRMu.Lock()
		o.minISRKnown[topic] = out.MinISR
		o.minISRMu.Unlock()
	}
	return out, nil
}

func sortedIDs(ids []int32) []int32 {
	out := slices.Clone(ids)
	if out == nil {
		out = []int32{}
	}
	slices.Sort(out)
	return out
}

// minISR reads topic's min.insync.replicas; 0 when the broker does not
// know the setting.
func (o *Offsets) minISR(ctx context.Context, topic string) (int, error) {
	res, err := o.admin.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic}},
		kafka.SetAdminRequestTimeout(remaining(ctx)))
	if err != nil {
		return 0, fmt.Errorf("observe: describe configs of %s: %w", topic, err)
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return 0, fmt.Errorf("observe: describe configs of %s: %w", topic, r.Error)
		}
		if e, ok := r.Config["min.insync.replicas"]; ok && e.Value != "" {
			n, err := strconv.Atoi(e.Value)
			if err != nil {
				return 0, fmt.Errorf("observe: min.insync.replicas of %s: %q", topic, e.Value)
			}
			return n, nil
		}
	}
	return 0, nil
}
