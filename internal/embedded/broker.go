package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg/kgocfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// BrokerConfig configures RunBroker.
type BrokerConfig struct {
	// DataDir holds kfake's segments, group state and committed offsets; it
	// is created if missing and locked while the broker runs.
	DataDir string
	// Listen is host:port; empty means 127.0.0.1:9092, an empty host means
	// 127.0.0.1, port 0 picks a free port (see the Listening event).
	// Wildcard hosts are refused: kfake advertises its listener address in
	// metadata and clients cannot connect to 0.0.0.0.
	Listen string
	// Topic is created with Partitions partitions if the data dir does not
	// have it yet, e.g. "sensor-data".
	Topic string
	// Partitions of Topic when it is created, e.g. 3.
	Partitions int32
	// OffsetsRetention: how long a group's commits outlive the group's
	// last member (0: kfake's default, 7 days); see
	// kafkacfg.KfakeOffsetsRetention.
	OffsetsRetention time.Duration
}

// Kafka's own broker defaults (group.min/max.session.timeout.ms): any
// librdkafka session.timeout.ms from 6 s (its minimum as a broker default) to
// 45 s (librdkafka's default) is accepted, as on Apache Kafka.
const (
	groupMinSession = 6 * time.Second
	groupMaxSession = 30 * time.Minute
)

// RunBroker runs a single-node Kafka-protocol broker until ctx is cancelled,
// then persists its state and returns nil. It emits one status.Listening
// event (Endpoint "kafka") with the bound address once the topic exists.
//
// Topic handling, decided so nothing surprising is created:
//   - Auto topic creation is off. Producing to or subscribing to another
//     name fails with UNKNOWN_TOPIC_OR_PARTITION instead of silently creating
//     a topic with the cluster's default partition count.
//   - Topics created explicitly with "default" (-1) partitions get
//     cfg.Partitions, not kfake's default of 10.
//   - kfake ignores seed topics when it reloads a data dir, so the topic is
//     checked after start and created if absent. If it exists with a
//     different partition count, the existing topic is kept as is (data and
//     key-to-partition mapping stay valid) and a warning is logged; remove
//     the data dir to start over with the new count.
func RunBroker(ctx context.Context, cfg BrokerConfig, em *status.Emitter, log *slog.Logger) error {
	log = orDiscard(log)
	if ctx.Err() != nil {
		return nil
	}
	if cfg.Topic == "" {
		return errors.New("broker: topic is empty")
	}
	if cfg.Partitions < 1 {
		return fmt.Errorf("broker: partitions must be at least 1, got %d", cfg.Partitions)
	}
	addr, err := resolveListen(cfg.Listen, "9092")
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if host, _, _ := net.SplitHostPort(addr); net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		return fmt.Errorf("broker: listen address %s: a wildcard host cannot be advertised to clients; name a concrete address", addr)
	}
	dir, unlock, err := prepareDir(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	defer unlock()

	// We bind the socket ourselves so that a busy port is a plain error
	// before kfake touches the data dir, and so that only this one address
	// is listened on (kfake would otherwise pick 127.0.0.1 itself).
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("broker: %w", portHint(err))
	}
	defer ln.Close() // no-op after kfake closed it
	handedOut := false
	listenFn := func(string, string) (net.Listener, error) {
		if handedOut {
			return nil, errors.New("broker: only one listener is prepared")
		}
		handedOut = true
		return ln, nil
	}

	start := time.Now()
	c, err := newCluster(
		kfake.NumBrokers(1),
		kfake.ListenFn(listenFn),
		kfake.DataDir(dir),
		kfake.ClusterID("krl"), // only used for a fresh dir; meta.json wins on reload
		kfake.SeedTopics(cfg.Partitions, cfg.Topic),
		kfake.DefaultNumPartitions(int(cfg.Partitions)),
		kfake.GroupMinSessionTimeout(groupMinSession),
		kfake.GroupMaxSessionTimeout(groupMaxSession),
		kfake.BrokerConfigs(brokerConfigs),
		// Options given later win: the ticker that expires commits is
		// created when the cluster starts, from these.
		kfake.BrokerConfigs(kafkacfg.KfakeOffsetsRetention(cfg.OffsetsRetention)),
		kfake.WithLogger(kfakeLogger{log}),
	)
	if err != nil {
		return fmt.Errorf("broker: start with data dir %s: %w", dir, err)
	}
	defer func() {
		t := time.Now()
		c.Close() // persists state; waits for it
		log.Info("broker stopped", "took", time.Since(t).Round(time.Millisecond))
	}()

	if err := ensureTopic(c, cfg.Topic, cfg.Partitions, nil, log); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	// Beside the topic, its dead-letter topic (consumer-usage forwards
	// poison records there).
	if err := ensureTopic(c, kafkacfg.DeadLetterTopic(cfg.Topic), kafkacfg.DeadLetterPartitions, nil, log); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	// And consumer-current's changelog, compacted.
	changelog := kafkacfg.ChangelogTopic(cfg.Topic)
	reloaded := c.TopicInfo(changelog) != nil
	if err := ensureTopic(c, changelog, kafkacfg.ChangelogPartitions, kafkacfg.ChangelogTopicConfig(), log); err != nil {
		return fmt.Errorf("broker: %w", err)
	}

	bound := ln.Addr().String()
	if reloaded {
		if err := startCleaner(ctx, bound, changelog); err != nil {
			log.Warn("compaction does not run until a topic is created or its configuration altered", "err", err)
		}
	}
	log.Info("broker listening", "addr", bound, "data_dir", dir, "topic", cfg.Topic,
		"startup", time.Since(start).Round(time.Millisecond))
	em.Emit(status.Event{Type: status.Listening, Endpoint: "kafka", Addr: bound})

	<-ctx.Done()
	return nil
}

func newCluster(opts ...kfake.Opt) (c *kfake.Cluster, err error) {
	defer recovered("kfake", &err)
	return kfake.NewCluster(opts...)
}

// brokerConfigs: compaction that really runs, and a topic that keeps its
// history. kfake cleans compacted topics (consumer-current's changelog) on
// a ticker of log.cleaner.backoff.ms (its default is an hour); once that
// ticker runs it also applies retention.ms to every topic (7 days by
// default), and the lab's topic keeps all of its messages: consumer-usage's
// replays and the audit read them.
//
// A short retention (krl --retention, the T key) is the topic's own
// retention.ms, applied on the same 1 s ticker (kfake runs it while a topic
// is compacted or has retention configs, and starts it again at every
// config change). kfake deletes by producer batch, not by segment: at each
// tick every batch whose newest record's timestamp (the producer's
// CreateTime) is older than retention.ms is dropped, the log start moves
// to the end of the newest such batch, and the segment files left empty
// are removed. segment.ms and segment.bytes change nothing there; Apache
// Kafka deletes whole closed segments instead (kafkacfg.RetentionTopicConfig).
var brokerConfigs = map[string]string{
	"log.cleaner.backoff.ms": "1000",
	"log.retention.ms":       "-1",
}

// startCleaner makes kfake start its cleaner after a reload from the data
// dir: it starts the ticker only when a topic is created or deleted or
// its configuration altered, so the changelog's cleanup.policy is set
// again, through the protocol, to what it is.
func startCleaner(ctx context.Context, addr, topic string) error {
	cl, err := kgo.NewClient(kgocfg.Client(addr, "krl-broker-cleaner", nil)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	policy := kafkacfg.ChangelogTopicConfig()["cleanup.policy"]
	res, err := kadm.NewClient(cl).AlterTopicConfigs(actx,
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: &policy}}, topic)
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// ensureTopic creates topic (with configs) if the (possibly reloaded)
// cluster lacks it.
func ensureTopic(c *kfake.Cluster, topic string, partitions int32, configs map[string]string, log *slog.Logger) error {
	if c.TopicInfo(topic) == nil {
		if err := c.CreateTopic(topic, partitions, configs); err != nil {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
		log.Info("topic created", "topic", topic, "partitions", partitions)
		return nil
	}
	if have := int32(len(c.PartitionInfos(topic))); have != partitions {
		log.Warn("topic exists with a different partition count; keeping it",
			"topic", topic, "partitions", have, "asked", partitions)
	}
	return nil
}

// kfakeLogger forwards kfake's errors only; its warnings are per-request
// failures that clients already see.
type kfakeLogger struct{ log *slog.Logger }

func (l kfakeLogger) Logf(level kfake.LogLevel, msg string, args ...any) {
	if level == kfake.LogLevelError {
		l.log.Error("kfake: " + fmt.Sprintf(msg, args...))
	}
}
