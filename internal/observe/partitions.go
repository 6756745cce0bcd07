package observe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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
	ctx, cancel := bounded(ctx)
	defer cancel()
	t, err := o.topicMetadata(ctx, topic)
	if err != nil {
		return Layout{}, err
	}
	var out Layout
	for _, p := range t.Partitions.Sorted() {
		pi := PartitionInfo{Partition: p.Partition, Leader: p.Leader, Replicas: sortedIDs(p.Replicas), ISR: sortedIDs(p.ISR), Preferred: -1}
		if len(p.Replicas) > 0 {
			pi.Preferred = p.Replicas[0]
		}
		if pi.Leader < 0 || errors.Is(p.Err, kerr.LeaderNotAvailable) {
			pi.Leader = -1
		}
		out.Partitions = append(out.Partitions, pi)
	}
	// min.insync.replicas is read once per topic (the lab sets it when it
	// creates the topic): while a broker is dead a describe-configs request
	// can wait out the whole deadline, and the poll, which waits twice a
	// slow call, went slow too.
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
	var res kadm.ResourceConfigs
	err := untilAnswered(ctx, func() (err error) {
		res, err = o.admin.DescribeTopicConfigs(ctx, topic)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("observe: describe configs of %s: %w", topic, err)
	}
	for _, r := range res {
		if r.Err != nil {
			return 0, fmt.Errorf("observe: describe configs of %s: %w", topic, r.Err)
		}
		for _, c := range r.Configs {
			if c.Key != "min.insync.replicas" || c.Value == nil || *c.Value == "" {
				continue
			}
			n, err := strconv.Atoi(*c.Value)
			if err != nil {
				return 0, fmt.Errorf("observe: min.insync.replicas of %s: %q", topic, *c.Value)
			}
			return n, nil
		}
	}
	return 0, nil
}
