package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
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

	if err := ensureTopic(c, cfg.Topic, cfg.Partitions, log); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	// Beside the topic, its dead-letter topic (consumer-usage forwards
	// poison records there).
	if err := ensureTopic(c, kafkacfg.DeadLetterTopic(cfg.Topic), kafkacfg.DeadLetterPartitions, log); err != nil {
		return fmt.Errorf("broker: %w", err)
	}

	bound := ln.Addr().String()
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

// ensureTopic creates topic if the (possibly reloaded) cluster lacks it.
func ensureTopic(c *kfake.Cluster, topic string, partitions int32, log *slog.Logger) error {
	if c.TopicInfo(topic) == nil {
		if err := c.CreateTopic(topic, partitions, nil); err != nil {
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
