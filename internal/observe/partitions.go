package observe

import (
	"context"
	"fmt"
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

// Layout reads topic's partitions' leaders, replicas and ISRs with one
// DescribeTopics admin request (a request each time, not librdkafka's
// metadata cache, which refreshes only every topic.metadata.refresh.interval.ms
// or on errors) and its min.insync.replicas with DescribeConfigs.
func (o *Offsets) Layout(ctx context.Context, topic string) (Layout, error) {
	release, err := o.use()
	if err != nil {
		return Layout{}, err
	}
	defer release()
	ctx, cancel, left := bounded(ctx)
	defer cancel()
	res, err := o.admin.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames([]string{topic}),
		kafka.SetAdminRequestTimeout(left))
	if err != nil {
		return Layout{}, fmt.Errorf("observe: describe topic %s: %w", topic, err)
	}
	if len(res.TopicDescriptions) != 1 {
		return Layout{}, fmt.Errorf("observe: describe topic %s: %d descriptions", topic, len(res.TopicDescriptions))
	}
	d := res.TopicDescriptions[0]
	if d.Error.Code() != kafka.ErrNoError {
		return Layout{}, fmt.Errorf("observe: describe topic %s: %w", topic, d.Error)
	}
	var out Layout
	for _, p := range d.Partitions {
		pi := PartitionInfo{Partition: int32(p.Partition), Leader: -1, Replicas: nodeIDs(p.Replicas), ISR: nodeIDs(p.Isr)}
		if p.Leader != nil {
			pi.Leader = int32(p.Leader.ID)
		}
		out.Partitions = append(out.Partitions, pi)
	}
	sort.Slice(out.Partitions, func(i, j int) bool { return out.Partitions[i].Partition < out.Partitions[j].Partition })
	out.MinISR, out.MinISRErr = o.minISR(ctx, topic)
	return out, nil
}

func nodeIDs(nodes []kafka.Node) []int32 {
	out := make([]int32, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, int32(n.ID))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
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
