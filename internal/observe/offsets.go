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
	"slices"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// DefaultTimeout bounds a probe whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// NoCommit is the committed offset of a partition the group never committed.
const NoCommit int64 = -1

// bounded returns ctx with a deadline (DefaultTimeout if it had none) and
// the time left, which librdkafka needs as its own request timeout.
func bounded(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	if _, ok := ctx.Deadline(); !ok {
		c, cancel := context.WithTimeout(ctx, DefaultTimeout)
		return c, cancel, DefaultTimeout
	}
	c, cancel := context.WithCancel(ctx)
	return c, cancel, remaining(c)
}

// remaining is the time left before ctx's deadline, at least 1 ms (an
// expired context then fails in the call itself with ctx.Err()).
func remaining(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return DefaultTimeout
	}
	return max(time.Until(d), time.Millisecond)
}

// Offsets reads log-end offsets with one AdminClient and committed offsets
// with one never-joining consumer handle per group asked about (see
// kafkacfg.CommittedReader for why not the AdminClient). Safe for
// concurrent use.
type Offsets struct {
	brokers string
	log     *slog.Logger
	handle  *kafka.Producer // owns the admin connections; never produces
	admin   *kafka.AdminClient

	// Every call holds mu for reading and Close for writing, so no handle
	// is destroyed while in use; readersMu guards readers.
	mu        sync.RWMutex
	closed    bool
	readersMu sync.Mutex
	readers   map[string]*kafka.Consumer
	// minISRKnown: per topic the min.insync.replicas read (Layout, once).
	minISRMu    sync.Mutex
	minISRKnown map[string]int
}

// NewOffsets creates the clients for brokers; librdkafka's own log lines go
// to log (nil: discarded), never to stderr, which is the dashboard's
// terminal. Nothing connects yet: an unreachable broker shows up as an
// error from the first call.
func NewOffsets(brokers string, log *slog.Logger) (*Offsets, error) {
	// A plain AdminClient cannot redirect librdkafka's logs; one derived
	// from a producer handle can.
	p, err := kafka.NewProducer(kafkacfg.LogsToChannel(kafkacfg.Admin(brokers)))
	if err != nil {
		return nil, fmt.Errorf("observe: admin client: %w", err)
	}
	go ForwardLogs(p.Logs(), log)
	admin, err := kafka.NewAdminClientFromProducer(p)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("observe: admin client: %w", err)
	}
	return &Offsets{brokers: brokers, log: log, handle: p, admin: admin, readers: map[string]*kafka.Consumer{}, minISRKnown: map[string]int{}}, nil
}

// Close releases every client; calls in flight finish first.
func (o *Offsets) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	for _, c := range o.readers {
		c.Close()
	}
	o.admin.Close()
	o.handle.Close()
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
	ctx, cancel, left := bounded(ctx)
	done := func() { cancel(); release() }
	parts, err := o.partitions(ctx, topic, left)
	if err != nil {
		done()
		return nil, nil, nil, err
	}
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

func (o *Offsets) partitions(ctx context.Context, topic string, left time.Duration) ([]int32, error) {
	md, err := o.topicMetadata(topic, left)
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(md.Partitions))
	for i, p := range md.Partitions {
		out[i] = p.ID
	}
	slices.Sort(out)
	return out, nil
}

// topicMetadata asks a broker that is up for topic's metadata: a request
// each time (not librdkafka's cache). Not DescribeTopics: librdkafka sends
// that to the controller its metadata names, which on KRaft is one broker
// of the cluster, and while that broker is dead every DescribeTopics
// timed out ("Timed out waiting for controller") until its cache was
// refreshed: the whole failover went unseen. The admin handle never
// creates a topic by asking (kafkacfg.Admin).
func (o *Offsets) topicMetadata(topic string, left time.Duration) (kafka.TopicMetadata, error) {
	md, err := o.admin.GetMetadata(&topic, false, max(int(left/time.Millisecond), 1))
	var kerr kafka.Error
	if errors.As(err, &kerr) && (kerr.Code() == kafka.ErrTransport || kerr.Code() == kafka.ErrAllBrokersDown) {
		// No broker was usable for the whole time given: a timeout.
		return kafka.TopicMetadata{}, fmt.Errorf("observe: metadata of topic %s: %w (%w)", topic, err, context.DeadlineExceeded)
	}
	if err != nil {
		return kafka.TopicMetadata{}, fmt.Errorf("observe: metadata of topic %s: %w", topic, err)
	}
	t, ok := md.Topics[topic]
	if !ok {
		return kafka.TopicMetadata{}, fmt.Errorf("observe: metadata of topic %s: not in the answer", topic)
	}
	if t.Error.Code() != kafka.ErrNoError {
		return kafka.TopicMetadata{}, fmt.Errorf("observe: metadata of topic %s: %w", topic, t.Error)
	}
	if len(t.Partitions) == 0 {
		return kafka.TopicMetadata{}, fmt.Errorf("observe: topic %s has no partitions", topic)
	}
	return t, nil
}

// HighWatermarks returns the log-end offset (the offset the next produced
// message will get) of every partition of topic, read with ListOffsets
// "latest", which both kfake and Apache Kafka answer with the high
// watermark.
func (o *Offsets) HighWatermarks(ctx context.Context, topic string) (map[int32]int64, error) {
	ctx, parts, done, err := o.begin(ctx, topic)
	if err != nil {
		return nil, err
	}
	defer done()
	req := make(map[kafka.TopicPartition]kafka.OffsetSpec, len(parts))
	for _, p := range parts {
		req[kafka.TopicPartition{Topic: &topic, Partition: p}] = kafka.LatestOffsetSpec
	}
	res, err := o.admin.ListOffsets(ctx, req, kafka.SetAdminRequestTimeout(remaining(ctx)))
	if err != nil {
		return nil, fmt.Errorf("observe: list offsets %s: %w", topic, err)
	}
	out := make(map[int32]int64, len(parts))
	for tp, info := range res.ResultInfos {
		if info.Error.Code() != kafka.ErrNoError {
			return nil, fmt.Errorf("observe: list offsets %s[%d]: %w", topic, tp.Partition, info.Error)
		}
		if info.Offset < 0 {
			// Seen on a three-broker cluster while a partition changed
			// leader: no error and offset -1001 (OffsetInvalid). Not a log end.
			return nil, fmt.Errorf("observe: list offsets %s[%d]: no log end in the answer (%d)", topic, tp.Partition, info.Offset)
		}
		out[tp.Partition] = int64(info.Offset)
	}
	for _, p := range parts {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("observe: list offsets %s: no answer for partition %d", topic, p)
		}
	}
	return out, nil
}

// Committed returns group's committed offset for every partition of topic;
// NoCommit (-1) where the group has none. A group that never committed
// anything gives all NoCommit and no error, whichever way the broker says
// it (kfake: GROUP_ID_NOT_FOUND; Apache Kafka: no offset, which librdkafka
// reports as OffsetInvalid, -1001). A NOT_COORDINATOR answer (a broker
// still loading its group coordinator) is retried until the deadline.
func (o *Offsets) Committed(ctx context.Context, group, topic string) (map[int32]int64, error) {
	ctx, parts, done, err := o.begin(ctx, topic)
	if err != nil {
		return nil, err
	}
	defer done()
	out := make(map[int32]int64, len(parts))
	tps := make([]kafka.TopicPartition, len(parts))
	for i, p := range parts {
		out[p] = NoCommit
		tps[i] = kafka.TopicPartition{Topic: &topic, Partition: p}
	}

	c, err := o.reader(group)
	if err != nil {
		return nil, err
	}
	for {
		// Consumer.Committed does not take a context; it is bounded by the
		// time left instead.
		res, err := c.Committed(tps, int(remaining(ctx)/time.Millisecond))
		if kafkacfg.IsNoCommits(err) {
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
		for _, tp := range res {
			if tp.Topic == nil || *tp.Topic != topic {
				continue
			}
			if tp.Error != nil {
				if kafkacfg.IsNoCommits(tp.Error) {
					continue
				}
				return nil, fmt.Errorf("observe: committed offset of %s on %s[%d]: %w",
					group, topic, tp.Partition, tp.Error)
			}
			if tp.Offset >= 0 {
				out[tp.Partition] = int64(tp.Offset)
			}
		}
		return out, nil
	}
}

// reader returns the committed-offsets handle of group, creating it on
// first use. Callers hold o.mu for reading.
func (o *Offsets) reader(group string) (*kafka.Consumer, error) {
	o.readersMu.Lock()
	defer o.readersMu.Unlock()
	if c, ok := o.readers[group]; ok {
		return c, nil
	}
	c, err := kafka.NewConsumer(kafkacfg.LogsToChannel(kafkacfg.CommittedReader(o.brokers, group)))
	if err != nil {
		return nil, fmt.Errorf("observe: offsets reader for %s: %w", group, err)
	}
	go ForwardLogs(c.Logs(), o.log)
	o.readers[group] = c
	return c, nil
}

// retriable reports the broker answers that mean "ask again shortly".
func retriable(err error) bool {
	var kerr kafka.Error
	if !errors.As(err, &kerr) {
		return false
	}
	switch kerr.Code() {
	case kafka.ErrNotCoordinator, kafka.ErrCoordinatorLoadInProgress, kafka.ErrCoordinatorNotAvailable:
		return true
	}
	return false
}

// EnsureTopic creates topic with the given partitions unless it exists, so
// the dashboard works against a fresh external broker (the embedded one
// creates it itself). An existing topic is left as it is.
func (o *Offsets) EnsureTopic(ctx context.Context, topic string, partitions int) (created bool, err error) {
	return o.EnsureTopicReplicated(ctx, topic, partitions, 1, nil)
}

// EnsureTopicReplicated is EnsureTopic with a replication factor and topic
// configs (e.g. min.insync.replicas) for a topic it creates; an existing
// topic is left as it is.
func (o *Offsets) EnsureTopicReplicated(ctx context.Context, topic string, partitions, replication int, config map[string]string) (created bool, err error) {
	release, err := o.use()
	if err != nil {
		return false, err
	}
	defer release()
	ctx, cancel, left := bounded(ctx)
	defer cancel()
	res, err := o.admin.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: partitions, ReplicationFactor: replication, Config: config}},
		kafka.SetAdminOperationTimeout(left))
	if err != nil {
		return false, fmt.Errorf("observe: create topic %s: %w", topic, err)
	}
	for _, r := range res {
		switch r.Error.Code() {
		case kafka.ErrNoError:
			created = true
		case kafka.ErrTopicAlreadyExists:
		default:
			return false, fmt.Errorf("observe: create topic %s: %w", topic, r.Error)
		}
	}
	return created, nil
}
