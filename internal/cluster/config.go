package cluster

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
)

// Failure detection, shorter than Kafka's defaults so that a SIGKILLed
// broker's partitions get a new leader within seconds on stage:
//
//   - brokers heartbeat the controller every HeartbeatInterval (default 2 s);
//   - the controller fences a broker it has not heard from for
//     SessionTimeout (default 9 s) and moves the leadership of its
//     partitions to an in-sync follower, taking it out of every ISR;
//   - ReplicaLagMax (default 30 s): a follower that is alive but does not
//     keep up leaves the ISR after this long (a frozen broker, z);
//   - LeaderImbalanceCheck (default 300 s): how often the controller gives
//     each partition back to its preferred leader, so a restarted broker
//     (r) leads its share again within seconds and the leaders of a cluster
//     whose brokers came up one after the other are spread.
const (
	HeartbeatInterval    = time.Second
	SessionTimeout       = 5 * time.Second
	ReplicaLagMax        = 10 * time.Second
	LeaderImbalanceCheck = 10 * time.Second
)

// Heaps: a small JVM per node; four of them fit a laptop next to the
// dashboard (their RSS is in docs/performance.md).
const (
	BrokerHeap     = "-Xmx384m"
	ControllerHeap = "-Xmx256m"
)

// NodeDir is the node's directory under dir (RUNDIR/cluster).
func NodeDir(dir, name string) string { return filepath.Join(dir, name) }

// Settings are what a run asks of its brokers beside the plan; they may
// differ from one start to the next (server.properties is rewritten).
type Settings struct {
	// OffsetsRetention: offsets.retention.minutes, whole minutes from one
	// (kafkacfg.CheckOffsetsRetention); 0 keeps Kafka's default (7 days).
	OffsetsRetention time.Duration
}

// ServerProperties renders the node's server.properties; dataDir is its
// log.dirs (an absolute path: Kafka does not expand variables).
func (p Plan) ServerProperties(n Node, dataDir string, s Settings) string {
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	fmt.Fprintf(&b, "# Written by krl --cluster %d (internal/cluster): rewritten at every start.\n", p.Brokers)
	voters := fmt.Sprintf("%d@127.0.0.1:%d", ControllerID, p.ControllerPort)
	if n.Controller {
		w("process.roles", "controller")
		w("node.id", n.ID)
		w("controller.quorum.voters", voters)
		w("controller.listener.names", "CONTROLLER")
		w("listeners", "CONTROLLER://"+n.Addr())
		w("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT")
		w("log.dirs", dataDir)
		w("broker.session.timeout.ms", SessionTimeout.Milliseconds())
		w("leader.imbalance.check.interval.seconds", int(LeaderImbalanceCheck.Seconds()))
		return b.String()
	}
	rf, isr := p.Brokers, p.MinInsync()
	w("process.roles", "broker")
	w("node.id", n.ID)
	w("controller.quorum.voters", voters)
	w("controller.listener.names", "CONTROLLER")
	w("listeners", "PLAINTEXT://"+n.Addr())
	w("advertised.listeners", "PLAINTEXT://"+n.Addr())
	w("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT")
	w("inter.broker.listener.name", "PLAINTEXT")
	w("log.dirs", dataDir)
	w("num.partitions", 3)
	w("auto.create.topics.enable", true)
	w("default.replication.factor", rf)
	w("min.insync.replicas", isr)
	w("offsets.topic.replication.factor", rf)
	w("transaction.state.log.replication.factor", rf)
	w("transaction.state.log.min.isr", isr)
	w("share.coordinator.state.topic.replication.factor", rf)
	w("share.coordinator.state.topic.min.isr", isr)
	w("group.initial.rebalance.delay.ms", 0)
	// A static broker config: a topic given a short retention.ms (krl
	// --retention) loses its old segments within a second of their
	// expiry; a topic without one keeps the default week.
	w("log.retention.check.interval.ms", 1000)
	w("broker.heartbeat.interval.ms", HeartbeatInterval.Milliseconds())
	w("broker.session.timeout.ms", SessionTimeout.Milliseconds())
	w("replica.lag.time.max.ms", ReplicaLagMax.Milliseconds())
	offsets := kafkacfg.ApacheOffsetsRetention(s.OffsetsRetention)
	for _, k := range slices.Sorted(maps.Keys(offsets)) {
		w(k, offsets[k])
	}
	return b.String()
}

// log4j2Properties sends everything to stdout (the node's wrapper forwards
// it to the supervisor's log of the node), without the request and state
// change chatter.
const log4j2Properties = `# Written by krl --cluster (internal/cluster).
status = warn
# Keep logging while the node shuts down (its own hook runs after SIGTERM).
shutdownHook = disable
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
`

// WriteConfig writes the node's server.properties and log4j2.properties
// into its directory and returns the directory.
func (p Plan) WriteConfig(dir string, n Node, s Settings) (string, error) {
	nd, err := filepath.Abs(NodeDir(dir, n.Name))
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(nd, ",\\\n") {
		return "", fmt.Errorf("cluster: the directory %q must not contain commas, backslashes or newlines", nd)
	}
	if err := os.MkdirAll(filepath.Join(nd, "data"), 0o755); err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	if err := os.WriteFile(filepath.Join(nd, "server.properties"), []byte(p.ServerProperties(n, filepath.Join(nd, "data"), s)), 0o644); err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	if err := os.WriteFile(filepath.Join(nd, "log4j2.properties"), []byte(log4j2Properties), 0o644); err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	return nd, nil
}

// Formatted reports whether the node's data dir was formatted already.
func Formatted(nodeDir string) bool {
	_, err := os.Stat(filepath.Join(nodeDir, "data", "meta.properties"))
	return err == nil
}
