// Package observe holds the dashboard's read-only probes: broker offsets
// (high watermarks, committed offsets), the lag arithmetic on them, and
// HTTP clients for the consumers' answers. Every probe does its I/O within
// the caller's context; a context without a deadline gets DefaultTimeout so
// a probe called from a tea.Cmd can never hang the dashboard.
package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kgocfg"
)

// DefaultTimeout bounds a probe whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// NoCommit is the committed offset of a partition the group never committed.
const NoCommit int64 = -1

// bounded returns ctx with a deadline (DefaultTimeout if it had none).
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); !ok {
		return context.WithTimeout(ctx, DefaultTimeout)
	}
	return context.WithCancel(ctx)
}

// Offsets reads log-end offsets, committed offsets, the topic's layout and
// creates topics, all through one franz-go client (pure Go: the dashboard
// holds no librdkafka handle, and an idle client costs nothing). Offset
// fetches never join or change the group. Safe for concurrent use.
type Offsets struct {
	client *kgo.Client
	admin  *kadm.Client

	// Every call holds mu for reading and Close for writing, so the client
	// is not closed while in use.
	mu     sync.RWMutex
	closed bool
	// minISRKnown: per topic the min.insync.replicas read (Layout, once).
	minISRMu    sync.Mutex
	minISRKnown map[string]int
}

// NewOffsets creates the client for brokers; its log lines go to log
// (nil: discarded), never to stderr, which is the dashboard's terminal.
// Nothing connects yet: an unreachable broker shows up as an error from
// the first call.
func NewOffsets(brokers string, log *slog.Logger) (*Offsets, error) {
	cl, err := kgo.NewClient(kgocfg.Client(brokers, "krl-admin", log)...)
	if err != nil {
		return nil, fmt.Errorf("observe: admin client: %w", err)
	}
	return &Offsets{client: cl, admin: kadm.NewClient(cl), minISRKnown: map[string]int{}}, nil
}

// Close releases the client; calls in flight finish first.
func (o *Offsets) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	o.client.Close()
}

// Partitions lists topic's partition ids in order (a metadata request to
// a broker that is up: see topicMetadata).
func (o *Offsets) Partitions(ctx context.Context, topic string) ([]int32, error) {
	_, parts, done, err := o.begin(ctx, topic)
	if err != nil {
		return nil, err
	}
	done()
	return parts, nil
}

// begin opens a call about topic: it marks the call in flight, bounds ctx
// (DefaultTimeout when it has no deadline) and lists the partitions. The
// caller must call done.
func (o *Offsets) begin(ctx context.Context, topic string) (context.Context, []int32, func(), error) {
	release, err := o.use()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := bounded(ctx)
	done := func() { cancel(); release() }
	t, err := o.topicMetadata(ctx, topic)
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	parts := make([]int32, 0, len(t.Partitions))
	for p := range t.Partitions {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return ctx, parts, done, nil
}

// errClosed is returned by calls after Close.
var errClosed = errors.New("observe: offsets reader is closed")

// use marks a call in flight; the caller must call release.
func (o *Offsets) use() (release func(), err error) {
	o.mu.RLock()
	if o.closed {
		o.mu.RUnlock()
		return nil, errClosed
	}
	return o.mu.RUnlock, nil
}

// untilAnswered runs call until the broker answers (an answer may be a
// Kafka error: that is returned at once) or ctx ends. franz-go returns a
// refused connection at once; a broker that is starting or restarting is
// asked again, and one that never answers is a timeout (wrapping
// context.DeadlineExceeded), as the dashboard words it "Kafka down".
func untilAnswered(ctx context.Context, call func() error) error {
	for {
		err := call()
		if err == nil || !unanswered(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// unanswered: err is no answer from any broker (a connection refused or
// dropped), as opposed to Kafka's own error or the caller giving up.
func unanswered(err error) bool {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke), errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrClientClosed):
		return false
	case errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

// topicMetadata asks a broker that is up for topic's metadata: a request
// each time, not franz-go's metadata cache (kadm.Metadata answers from it
// for 5 s) and never the controller: while a controller-elected broker was
// dead, requests routed to it saw nothing of the failover. franz-go sends
// it to the brokers in turn, so a dead one is passed over. The request
// never creates the topic.
func (o *Offsets) topicMetadata(ctx context.Context, topic string) (kadm.TopicDetail, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	var resp *kmsg.MetadataResponse
	err := untilAnswered(ctx, func() (err error) {
		resp, err = req.RequestWith(ctx, o.client)
		return err
	})
	if err != nil {
		return kadm.TopicDetail{}, fmt.Errorf("observe: metadata of topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return kadm.TopicDetail{}, fmt.Errorf("observe: metadata of topic %s: %w", topic, err)
		}
		if len(t.Partitions) == 0 {
			return kadm.TopicDetail{}, fmt.Errorf("observe: topic %s has no partitions", topic)
		}
		td := kadm.TopicDetail{Topic: topic, Partitions: make(kadm.PartitionDetails, len(t.Partitions))}
		for _, p := range t.Partitions {
			td.Partitions[p.Partition] = kadm.PartitionDetail{Topic: topic, Partition: p.Partition, Leader: p.Leader,
				LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR, OfflineReplicas: p.OfflineReplicas,
				Err: kerr.ErrorForCode(p.ErrorCode)}
		}
		return td, nil
	}
	return kadm.TopicDetail{}, fmt.Errorf("observe: metadata of topic %s: not in the answer", topic)
}

// HighWatermarks returns the log-end offset (the offset the next produced
// message will get) of every partition of topic, read with ListOffsets
// "latest", which both kfake and Apache Kafka answer with the high
// watermark.
func (o *Offsets) HighWatermarks(ctx context.Context, topic string) (map[int32]int64, error) {
	_, ends, err := o.readOffsets(ctx, topic, false)
	return ends, err
}

// Watermarks returns every partition's log start offset (the first offset
// still in the log: retention moves it forward) and high watermark, read
// as one cut: the starts first, then the ends, so no start is read after
// its end and start <= end holds for every partition (a ListOffsets
// request takes one timestamp per partition, so they are two requests).
func (o *Offsets) Watermarks(ctx context.Context, topic string) (starts, ends map[int32]int64, err error) {
	return o.readOffsets(ctx, topic, true)
}

// readOffsets reads the log ends of topic's partitions, and with withStarts
// their log starts before them.
func (o *Offsets) readOffsets(ctx context.Context, topic string, withStarts bool) (starts, ends map[int32]int64, err error) {
	ctx, parts, done, err := o.begin(ctx, topic)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	if withStarts {
		if starts, err = o.listOffsets(ctx, topic, parts, "log start", o.admin.ListStartOffsets); err != nil {
			return nil, nil, err
		}
	}
	ends, err = o.listOffsets(ctx, topic, parts, "log end", o.admin.ListEndOffsets)
	if err != nil {
		return nil, nil, err
	}
	return starts, ends, nil
}

// listOffsets asks list for every partition of parts' offset.
func (o *Offsets) listOffsets(ctx context.Context, topic string, parts []int32, what string,
	list func(context.Context, ...string) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
	var res kadm.ListedOffsets
	err := untilAnswered(ctx, func() (err error) {
		res, err = list(ctx, topic)
		return err
	})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("observe: list offsets %s: %w", topic, err)
	}
	out := make(map[int32]int64, len(parts))
	for _, p := range parts {
		info, ok := res.Lookup(topic, p)
		if !ok {
			return nil, fmt.Errorf("observe: list offsets %s: no answer for partition %d", topic, p)
		}
		if info.Err != nil {
			return nil, fmt.Errorf("observe: list offsets %s[%d]: %w", topic, p, info.Err)
		}
		if info.Offset < 0 {
			// A partition changing leader can answer without an error and
			// without an offset. Not a log end.
			return nil, fmt.Errorf("observe: list offsets %s[%d]: no %s in the answer (%d)", topic, p, what, info.Offset)
		}
		out[p] = info.Offset
	}
	return out, nil
}

// AlterTopicConfig sets configs on topic (an incremental alter: the
// topic's other configs stay as they are).
func (o *Offsets) AlterTopicConfig(ctx context.Context, topic string, configs map[string]string) error {
	release, err := o.use()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := bounded(ctx)
	defer cancel()
	alter := make([]kadm.AlterConfig, 0, len(configs))
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(configs[k])})
	}
	var res kadm.AlterConfigsResponses
	err = untilAnswered(ctx, func() (err error) {
		res, err = o.admin.AlterTopicConfigs(ctx, alter, topic)
		return err
	})
	if err == nil {
		var r kadm.AlterConfigsResponse
		if r, err = res.On(topic, nil); err == nil {
			err = r.Err
			if err != nil && r.ErrMessage != "" {
				err = fmt.Errorf("%w: %s", err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("observe: configure topic %s: %w", topic, err)
	}
	return nil
}

// Committed returns group's committed offset for every partition of topic;
// NoCommit (-1) where the group has none. A group that never committed
// anything gives all NoCommit and no error, whichever way the broker says
// it (kfake: GROUP_ID_NOT_FOUND; Apache Kafka: offset -1). A coordinator
// still loading (NOT_COORDINATOR and the like) is asked again until the
// deadline. The fetch never joins the group.
func (o *Offsets) Committed(ctx context.Context, group, topic string) (map[int32]int64, error) {
	ctx, parts, done, err := o.begin(ctx, topic)
	if err != nil {
		return nil, err
	}
	defer done()
	out := make(map[int32]int64, len(parts))
	for _, p := range parts {
		out[p] = NoCommit
	}
	for {
		var res kadm.OffsetResponses
		err := untilAnswered(ctx, func() (err error) {
			res, err = o.admin.FetchOffsets(ctx, group)
			return err
		})
		if errors.Is(err, kerr.GroupIDNotFound) {
			return out, nil
		}
		if retriable(err) && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("observe: committed offsets of %s: %w", group, err)
		}
		for _, p := range parts {
			r, ok := res.Lookup(topic, p)
			if !ok {
				continue
			}
			if r.Err != nil {
				if errors.Is(r.Err, kerr.GroupIDNotFound) {
					continue
				}
				return nil, fmt.Errorf("observe: committed offset of %s on %s[%d]: %w", group, topic, p, r.Err)
			}
			if r.At >= 0 {
				out[p] = r.At
			}
		}
		return out, nil
	}
}

// retriable reports the broker answers that mean "ask again shortly".
func retriable(err error) bool {
	return errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.CoordinatorNotAvailable)
}

// EnsureTopic creates topic with the given partitions unless it exists, so
// the dashboard works against a fresh external broker (the embedded one
// creates it itself). An existing topic is left as it is.
func (o *Offsets) EnsureTopic(ctx context.Context, topic string, partitions int) (created bool, err error) {
	return o.EnsureTopicReplicated(ctx, topic, partitions, 1, nil)
}

// EnsureTopicReplicated is EnsureTopic with a replication factor and topic
// configs (e.g. min.insync.replicas) for a topic it creates; an existing
// topic is left as it is; a created one is returned once it is listed.
func (o *Offsets) EnsureTopicReplicated(ctx context.Context, topic string, partitions, replication int, config map[string]string) (created bool, err error) {
	release, err := o.use()
	if err != nil {
		return false, err
	}
	defer release()
	ctx, cancel := bounded(ctx)
	defer cancel()
	var configs map[string]*string
	if len(config) > 0 {
		configs = make(map[string]*string, len(config))
		for k, v := range config {
			configs[k] = kadm.StringPtr(v)
		}
	}
	err = untilAnswered(ctx, func() error {
		_, err := o.admin.CreateTopic(ctx, int32(partitions), int16(replication), configs, topic)
		return err
	})
	switch {
	case err == nil:
		return true, o.awaitMetadata(ctx, topic, "not yet listed after its creation", func(_ kadm.TopicDetail, err error) bool {
			return err == nil
		})
	case errors.Is(err, kerr.TopicAlreadyExists):
		return false, nil
	}
	return false, fmt.Errorf("observe: create topic %s: %w", topic, err)
}

// AddPartitions grows topic to total partitions (CreatePartitions), the
// new ones placed by the cluster. Kafka can add partitions, never remove
// them: a total below the current count is refused (INVALID_PARTITIONS);
// the current count too by Apache Kafka, while the embedded broker takes
// it as nothing to do (the lab asks only for more). It returns once a
// metadata request lists the new partitions.
func (o *Offsets) AddPartitions(ctx context.Context, topic string, total int) error {
	release, err := o.use()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := bounded(ctx)
	defer cancel()
	var res kadm.CreatePartitionsResponses
	err = untilAnswered(ctx, func() (err error) {
		res, err = o.admin.UpdatePartitions(ctx, total, topic)
		return err
	})
	if err == nil {
		var r kadm.CreatePartitionsResponse
		if r, err = res.On(topic, nil); err == nil {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("observe: grow topic %s to %d partitions: %w", topic, total, err)
	}
	return o.awaitMetadata(ctx, topic, fmt.Sprintf("not yet listed with %d partitions", total), func(td kadm.TopicDetail, err error) bool {
		return err == nil && len(td.Partitions) >= total
	})
}

// DeleteTopic deletes topic and returns once a metadata request no longer
// finds it (a deleted topic's name is free again only then); deleting a
// topic that does not exist is not an error.
func (o *Offsets) DeleteTopic(ctx context.Context, topic string) error {
	release, err := o.use()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := bounded(ctx)
	defer cancel()
	var res kadm.DeleteTopicResponses
	err = untilAnswered(ctx, func() (err error) {
		res, err = o.admin.DeleteTopics(ctx, topic)
		return err
	})
	if err == nil {
		if r, ok := res[topic]; ok && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("observe: delete topic %s: %w", topic, err)
	}
	return o.awaitMetadata(ctx, topic, "still listed after its deletion", func(_ kadm.TopicDetail, err error) bool {
		return errors.Is(err, kerr.UnknownTopicOrPartition)
	})
}

// awaitMetadata asks for topic's metadata every 100 ms until seen holds.
// Apache Kafka's brokers learn a created, grown or deleted topic from the
// controller a moment after the admin request is answered; until then a
// metadata request still shows the old topic.
func (o *Offsets) awaitMetadata(ctx context.Context, topic, pending string, seen func(kadm.TopicDetail, error) bool) error {
	for {
		if seen(o.topicMetadata(ctx, topic)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("observe: topic %s %s: %w", topic, pending, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
