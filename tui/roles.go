package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/cluster"
	"github.com/kafka-recovery-lab/krl/internal/embedded"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// brokerMain runs the embedded Kafka-protocol broker role.
func brokerMain(args []string) int {
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	var cfg embedded.BrokerConfig
	var partitions int
	fs.StringVar(&cfg.DataDir, "data-dir", "krl-data/broker", "directory for segments and committed offsets")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:9092", "address to listen on (port 0 picks a free one)")
	fs.StringVar(&cfg.Topic, "topic", telemetry.DefaultTopic, "topic to create at start")
	fs.IntVar(&partitions, "partitions", 3, "partitions of the topic")
	fs.DurationVar(&cfg.OffsetsRetention, "offsets-retention", 0, "how long a group's committed offsets outlive its last member (0: the default, 7 days)")
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if partitions < 1 || partitions > 1000 {
		return cli.Exit(os.Stderr, cli.Usagef("--partitions must be between 1 and 1000, got %d", partitions))
	}
	if cfg.OffsetsRetention != 0 {
		if err := kafkacfg.CheckOffsetsRetention(cfg.OffsetsRetention, false); err != nil {
			return cli.Exit(os.Stderr, cli.Usagef("--offsets-retention: %v", err))
		}
	}
	cfg.Partitions = int32(partitions)
	return runUntilSignal("broker", func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
		return embedded.RunBroker(ctx, cfg, em, log)
	})
}

// storeMain runs the embedded MongoDB-wire store role.
func storeMain(args []string) int {
	fs := flag.NewFlagSet("store", flag.ContinueOnError)
	var cfg embedded.StoreConfig
	fs.StringVar(&cfg.DataDir, "data-dir", "krl-data/store", "directory for the SQLite files")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:27017", "address to listen on (port 0 picks a free one)")
	fs.DurationVar(&cfg.Latency, "latency", 0, "delay every request a client sends by this much (a slow store; 0: none)")
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if cfg.Latency < 0 || cfg.Latency > time.Minute {
		return cli.Exit(os.Stderr, cli.Usagef("--latency must be between 0 and 1m, got %s", cfg.Latency))
	}
	return runUntilSignal("store", func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
		return embedded.RunStore(ctx, cfg, em, log)
	})
}

// kafkaNodeMain runs one node of --cluster N's Apache Kafka cluster (a JVM
// in this process's group; see cluster.RunNode).
func kafkaNodeMain(args []string) int {
	fs := flag.NewFlagSet("kafka-node", flag.ContinueOnError)
	var cfg cluster.NodeConfig
	fs.StringVar(&cfg.Dir, "dir", "", "the cluster's directory (RUNDIR/cluster, holds cluster.json)")
	fs.StringVar(&cfg.Name, "name", "", "the node: controller or broker-N")
	fs.StringVar(&cfg.ClasspathFile, "classpath-file", os.Getenv("KRL_KAFKA_CLASSPATH"), "file holding Apache Kafka's classpath (scripts/real-kafka.sh classpath)")
	fs.DurationVar(&cfg.Settings.OffsetsRetention, "offsets-retention", 0, "offsets.retention.minutes as a duration, whole minutes (0: the default, 7 days)")
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit(os.Stderr, err)
	}
	if cfg.Settings.OffsetsRetention != 0 {
		if err := kafkacfg.CheckOffsetsRetention(cfg.Settings.OffsetsRetention, true); err != nil {
			return cli.Exit(os.Stderr, cli.Usagef("--offsets-retention: %v", err))
		}
	}
	if cfg.Dir == "" || cfg.Name == "" || cfg.ClasspathFile == "" {
		return cli.Exit(os.Stderr, cli.Usagef("kafka-node needs --dir, --name and --classpath-file"))
	}
	return runUntilSignal(cfg.Name, func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
		return cluster.RunNode(ctx, cfg, em, log)
	})
}

// runUntilSignal runs a role until SIGINT or SIGTERM, its status events and
// logs under name, and exits as the role's error says.
func runUntilSignal(name string, run func(context.Context, *status.Emitter, *slog.Logger) error) int {
	ctx, stop := cli.SignalContext()
	defer stop()
	em := status.New(name)
	return cli.ExitReporting(em, os.Stderr, run(ctx, em, cli.Logger(name)))
}
