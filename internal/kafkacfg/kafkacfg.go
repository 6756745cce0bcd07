// Package kafkacfg is the one place that builds librdkafka configurations
// and that knows how the embedded broker differs from Apache Kafka.
package kafkacfg

import (
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/lesson"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Fixed names of the product.
const (
	// UsageGroupID is consumer-usage's fixed group: Kafka remembers its offsets.
	UsageGroupID = "demo-usage"
	// CurrentGroupPrefix prefixes consumer-current's fresh random group per start.
	CurrentGroupPrefix = "demo-current-"
	// AuditGroupPrefix prefixes the dashboard's audit reader group (never commits).
	AuditGroupPrefix = "krl-audit-"
)

// Base is what every librdkafka client of the product shares (the roles'
// and the tests' own readers, kafkacfgtest).
func Base(brokers, clientID string) kafka.ConfigMap {
	c := kafka.ConfigMap{
		"bootstrap.servers": brokers,
		"client.id":         clientID,
		// An unreachable broker must surface quickly as a retrying status,
		// not as minutes of silence.
		"socket.connection.setup.timeout.ms": 5000,
		"reconnect.backoff.max.ms":           2000,
		// Errors come through the events channel / logs, not to stderr in C.
		"log.connection.close": false,
		// KIP-714 client metrics only add "telemetry" log noise here.
		"enable.metrics.push": false,
		// Partitions added to the topic reach a client at its next
		// metadata refresh: librdkafka's default is 5 minutes, so the
		// producer would keep every key where it was, and a consumer group
		// would not rebalance onto the new partition, for up to that long.
		"topic.metadata.refresh.interval.ms": int(MetadataRefresh / time.Millisecond),
	}
	if contexts := os.Getenv(DebugEnv); contexts != "" {
		c["debug"] = contexts
	}
	return c
}

// DebugEnv names the environment variable whose value, when set, becomes
// every librdkafka client's debug contexts ("cgrp,fetch"): the roles
// inherit the dashboard's environment, and librdkafka writes the lines to
// their stderr, which the lab keeps in the run's logs/. It is for finding
// out what a client did around a fault, not for a demo: some contexts
// write lines by the thousand a second.
const DebugEnv = "KRL_LIBRDKAFKA_DEBUG"

// MetadataRefresh is how often every librdkafka client of the product
// refreshes the topic's metadata (topic.metadata.refresh.interval.ms): the
// bound on how long after partitions are added the producer starts using
// them and a consumer group rebalances onto them. One metadata request a
// second per client is nothing to a broker.
const MetadataRefresh = time.Second

// ProducerMessageTimeout bounds how long the producer holds a record for a
// broker that is away before librdkafka reports it failed. It outlasts any
// broker restart the lab offers (an Apache Kafka restart after SIGKILL can
// take over 30 s on a busy 2-core machine), so an outage buffers records
// instead of failing them.
const ProducerMessageTimeout = 2 * time.Minute

// Producer: idempotent, acks=all, as the product specifies.
func Producer(brokers string) *kafka.ConfigMap { return ProducerAcks(brokers, lesson.AcksAll) }

// ProducerAcks is the producer with the given acks setting. acks=1 turns
// idempotence off: librdkafka refuses enable.idempotence without acks=all
// ("Configuration property `acks` must be set to `all` when
// `enable.idempotence` is true"), so a record retried after a lost
// acknowledgement can be written twice, and retries may reorder a key.
// acks=0 turns it off too: librdkafka counts a record delivered once it is
// written to the broker's connection and reports no offset (the report's
// offset is a placeholder, see producer/acked.go). While no broker
// connection is up it sends nothing and holds the records, as with the
// other settings, for up to message.timeout.ms.
func ProducerAcks(brokers string, acks lesson.Acks) *kafka.ConfigMap {
	c := Base(brokers, "krl-producer")
	c["enable.idempotence"] = acks.Idempotent()
	c["acks"] = string(acks)
	c["linger.ms"] = 5
	c["message.timeout.ms"] = int(ProducerMessageTimeout / time.Millisecond)
	// Pinned, not left to the default (the same today), because the
	// partitions panel computes where each sensor's key lands with
	// PartitionFor, which must be this partitioner.
	c["partitioner"] = Partitioner
	goChannels(c)
	return &c
}

// goChannels sizes confluent-kafka-go's own buffers of a producer. It
// allocates Events() and ProduceChannel() whole at NewProducer, 1,000,000
// entries each by default: 24 MB of Go heap that counts as live, so the
// collector let the heap grow to twice that before collecting and an idle
// producer's RSS crept up by some 20 MB. Every caller reads its reports as
// they come (Events() or a channel per Produce), so 10,000 is room enough;
// were it full, librdkafka's reports would wait in its own queue.
// ProduceChannel() is not used.
func goChannels(c kafka.ConfigMap) {
	c["go.events.channel.size"] = 10_000
	c["go.produce.channel.size"] = 0
}

// ProduceErrorLogs makes a producer log, on its Logs() channel (the caller
// must drain it), the produce errors librdkafka retries without a word: an
// acks=all write refused with NOT_ENOUGH_REPLICAS is retried until
// message.timeout.ms with no event and no delivery report. Only the "msg"
// debug context logs them ("MSGSET ... MessageSet with 2 message(s) (MsgId
// 3, BaseSeq 2) encountered error: Broker: Not enough in-sync replicas
// (actions Retry,MsgNotPersisted)", level 7); ProduceError reads them.
// That context also logs a line or two per produce request, which the
// reader drops: at the telemetry's rate (tens of records a second) that is
// nothing, but it is not for a bulk loader.
func ProduceErrorLogs(c *kafka.ConfigMap) *kafka.ConfigMap {
	if contexts, ok := (*c)["debug"].(string); ok {
		(*c)["debug"] = contexts + ",msg"
	} else {
		(*c)["debug"] = "msg"
	}
	return LogsToChannel(c)
}

// ProduceError returns the broker error of a ProduceErrorLogs line that
// reports one, named as Kafka names it where known: "NOT_ENOUGH_REPLICAS
// (Broker: Not enough in-sync replicas)".
func ProduceError(line string) (string, bool) {
	const marker = " encountered error: "
	i := strings.Index(line, marker)
	if i < 0 {
		return "", false
	}
	text := line[i+len(marker):]
	if j := strings.LastIndex(text, " (actions "); j >= 0 {
		text = text[:j]
	}
	for code, name := range kafkaNames {
		if code.String() == text {
			return name + " (" + text + ")", true
		}
	}
	return text, true
}

// kafkaNames: Kafka's names of the produce errors a failover shows.
var kafkaNames = map[kafka.ErrorCode]string{
	kafka.ErrNotEnoughReplicas:            "NOT_ENOUGH_REPLICAS",
	kafka.ErrNotEnoughReplicasAfterAppend: "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
	kafka.ErrNotLeaderForPartition:        "NOT_LEADER_OR_FOLLOWER",
	kafka.ErrLeaderNotAvailable:           "LEADER_NOT_AVAILABLE",
	kafka.ErrRequestTimedOut:              "REQUEST_TIMED_OUT",
}

// Partitioner is the producer's partitioner: librdkafka's
// consistent_random, CRC-32 (IEEE, as zlib) of the key modulo the
// partition count (rd_kafka_msg_partitioner_consistent_random; only a
// keyless record is placed at random, and every record here has a key).
const Partitioner = "consistent_random"

// PartitionFor is the partition Partitioner puts key in, on a topic of
// partitions partitions (librdkafka: rd_crc32(key, len) % partition_cnt,
// unsigned). A non-positive count or an empty key gives -1: librdkafka
// would pick a partition at random.
func PartitionFor(key string, partitions int) int32 {
	if partitions <= 0 || key == "" {
		return -1
	}
	return int32(crc32.ChecksumIEEE([]byte(key)) % uint32(partitions))
}

// Current is consumer-current's config: a fresh group, earliest, no commits.
func Current(brokers, groupID string) *kafka.ConfigMap {
	c := Base(brokers, "krl-consumer-current")
	c["group.id"] = groupID
	c["auto.offset.reset"] = "earliest"
	c["enable.auto.commit"] = false
	// Without this librdkafka caps replay at ~120k msg/s (FIELD-NOTES).
	c["fetch.queue.backoff.ms"] = 10
	// The prefetch queue is memory: librdkafka's defaults (100,000 messages,
	// 1 MB per partition fetch) made a 1M-record replay peak at 106 MB
	// against 51 MB for 10k. With these it peaks at 55 MB and is no slower
	// (2.19-2.22 s vs 2.36-2.75 s, scripts/bench.sh on the embedded broker).
	c["queued.min.messages"] = currentPrefetch
	c["max.partition.fetch.bytes"] = 256 << 10
	return &c
}

// CurrentReader is the config of one of consumer-current's readers (of
// readers in all): handles that only Assign the partitions the group
// member got (they need its group id, and never join, fetch for the group
// or commit). They share the member's prefetch between them, and look
// again 1 ms after finding their queue full instead of 10: a reader
// drains its share in a few ms, then waited out the rest of the backoff
// (the queue is full only while a replay outruns the reader, so idle it
// costs nothing).
func CurrentReader(brokers, groupID string, readers int) *kafka.ConfigMap {
	c := Current(brokers, groupID)
	(*c)["client.id"] = "krl-consumer-current-reader"
	(*c)["queued.min.messages"] = currentPrefetch / max(readers, 1)
	(*c)["fetch.queue.backoff.ms"] = 1
	return c
}

// currentPrefetch is consumer-current's prefetch in messages (see Current).
const currentPrefetch = 10_000

// Usage is consumer-usage's config for the given group and reset; both
// modes share it. instanceID is the static member's group.instance.id
// ("" = dynamic membership: every start is a new member, and a member that
// leaves or dies triggers a rebalance).
func Usage(brokers, groupID string, reset lesson.Reset, instanceID string) *kafka.ConfigMap {
	c := Base(brokers, "krl-consumer-usage")
	c["group.id"] = groupID
	c["auto.offset.reset"] = string(reset)
	c["enable.auto.commit"] = true
	c["auto.commit.interval.ms"] = 1000
	// Static membership: after a kill -9 the restarted consumer takes its
	// partitions back at once instead of waiting for the dead member's
	// session to expire (45 s by default), so a crash demo shows recovery,
	// not a rebalance timeout. Each instance of a scaled consumer-usage has
	// its own id (consumer-usage, consumer-usage-2, ...).
	if instanceID != "" {
		c["group.instance.id"] = instanceID
	}
	c["session.timeout.ms"] = 6000
	// A member learns of a rebalance at its next heartbeat: at the default
	// 3 s, an instance joining a scaled consumer-usage waited about 3 s for
	// its partitions (scripts/bench-rebalance.sh, both brokers).
	c["heartbeat.interval.ms"] = 1000
	// Both modes store an offset only after its message was handled:
	// Close() would otherwise store and commit prefetched, unprocessed
	// offsets (FIELD-NOTES), and a graceful stop must commit exactly what
	// was processed. Naive still commits every second whatever its store
	// holds, so a kill -9 replays what was processed since.
	c["enable.auto.offset.store"] = false
	// A backlog comes in fetches of at most this much per partition
	// (librdkafka's default: 1 MB, some 5,000 messages here). consumer-usage
	// handles a few thousand messages a second at most, so this holds no
	// rate back; at this size a backlog of a few thousand messages comes
	// in pieces, partition by partition, as a production backlog of
	// millions does at 1 MB: a partition that is done sooner has its newer
	// records delivered while another's older ones still come (the
	// partitions-added lesson).
	c["max.partition.fetch.bytes"] = UsageFetchBytes
	return &c
}

// UsageFetchBytes is consumer-usage's max.partition.fetch.bytes.
const UsageFetchBytes = 64 << 10

// DeadLetterSuffix names a topic's dead-letter topic: sensor-data.dlq.
const DeadLetterSuffix = ".dlq"

// DeadLetterTopic is the dead-letter topic of topic.
func DeadLetterTopic(topic string) string { return topic + DeadLetterSuffix }

// DeadLetterPartitions is the partition count the dead-letter topic is
// created with: one, so it reads as one ordered list of poison records.
const DeadLetterPartitions = 1

// DeadLetterProducer is consumer-usage's producer to the dead-letter topic:
// idempotent and acks=all like the telemetry producer, and with no message
// timeout, so a record waits for the broker instead of failing while it is
// away: a failed delivery is then a permanent error, never "perhaps
// written" (see consumers/usage/dlq.go for why that matters).
func DeadLetterProducer(brokers string) *kafka.ConfigMap {
	c := Producer(brokers)
	(*c)["client.id"] = "krl-consumer-usage-dlq"
	(*c)["linger.ms"] = 0
	(*c)["message.timeout.ms"] = 0
	(*c)["message.max.bytes"] = DeadLetterMaxBytes
	return c
}

// DeadLetterMaxBytes is the largest record the dead-letter producer sends
// (its message.max.bytes, librdkafka's default, under the 1048588 bytes a
// topic takes by default on Apache Kafka and the embedded broker). The
// source topic may hold larger records: consumer-usage cuts their
// dead-letter record to fit (consumers/usage/dlqenvelope.go).
const DeadLetterMaxBytes = 1_000_000

// DeadLetterReader reads the dead-letter topic once, by assignment (no
// group join, no commits; librdkafka only wants a group id).
func DeadLetterReader(brokers, groupID string) *kafka.ConfigMap {
	return readerFromEarliest(brokers, "krl-consumer-usage-dlq-reader", groupID)
}

// readerFromEarliest is a reader that starts at the earliest offset and
// never commits.
func readerFromEarliest(brokers, clientID, groupID string) *kafka.ConfigMap {
	c := Base(brokers, clientID)
	c["group.id"] = groupID
	c["auto.offset.reset"] = "earliest"
	c["enable.auto.commit"] = false
	c["enable.auto.offset.store"] = false
	return &c
}

// Audit reads a topic from earliest to check it (the producer's resume,
// the tests): never commits. The dashboard's own audit reads with franz-go.
func Audit(brokers, groupID string) *kafka.ConfigMap {
	c := readerFromEarliest(brokers, "krl-audit", groupID)
	(*c)["fetch.queue.backoff.ms"] = 10
	return c
}

// LogsToChannel makes a client deliver librdkafka's log lines on its Logs()
// channel instead of printing them to stderr: for clients living inside the
// dashboard, whose stderr is the terminal the TUI draws on. The caller must
// drain Logs() until Close. (An AdminClient cannot take it: derive the admin
// client from a Producer built with it, kafka.NewAdminClientFromProducer.)
func LogsToChannel(c *kafka.ConfigMap) *kafka.ConfigMap {
	(*c)["go.logs.channel.enable"] = true
	return c
}

// ChangelogSuffix names consumer-current's changelog topic:
// sensor-data.current-state.
const ChangelogSuffix = ".current-state"

// ChangelogTopic is consumer-current's changelog topic for topic: each
// sensor's latest state, keyed by sensor, compacted.
func ChangelogTopic(topic string) string { return topic + ChangelogSuffix }

// ChangelogPartitions: one, so a reader finds every value before the
// mark that says they are complete (consumers/current/changelog.go).
const ChangelogPartitions = 1

// ChangelogTopicConfig is the changelog's topic configuration: compacted,
// and set so that compaction really runs within seconds on Apache Kafka,
// which cleans only closed segments whose dirty share passes the ratio:
// a segment is rolled after a second (segment.ms) or 1 MiB (segment.bytes,
// Kafka 4's least), and any dirty share is worth cleaning
// (min.cleanable.dirty.ratio), without delay (min.compaction.lag.ms). The
// embedded broker takes them as they are and cleans on its own period
// (internal/embedded). The source topic itself is never compacted:
// consumer-usage's replays and the audit need every message.
func ChangelogTopicConfig() map[string]string {
	return map[string]string{
		"cleanup.policy":            "compact",
		"segment.ms":                "1000",
		"segment.bytes":             "1048576",
		"min.cleanable.dirty.ratio": "0.01",
		"min.compaction.lag.ms":     "0",
	}
}

// ChangelogProducer is consumer-current's producer to its changelog:
// idempotent and acks=all, so the values of one publication land in order
// before its mark.
func ChangelogProducer(brokers string) *kafka.ConfigMap {
	c := Producer(brokers)
	(*c)["client.id"] = "krl-consumer-current-changelog"
	(*c)["linger.ms"] = 5
	(*c)["message.timeout.ms"] = 30_000
	return c
}

// ChangelogReader reads the changelog once at a start, by assignment (no
// group join, no commits; librdkafka only wants a group id).
func ChangelogReader(brokers, groupID string) *kafka.ConfigMap {
	c := readerFromEarliest(brokers, "krl-consumer-current-changelog-reader", groupID)
	(*c)["fetch.queue.backoff.ms"] = 10
	return c
}

// RetentionTopicConfig is the source topic's configuration for a short
// retention (--retention, the T key): records older than retention are
// deleted. Apache Kafka deletes whole closed segments whose newest record
// is older than retention.ms, and checks every
// log.retention.check.interval.ms (a static broker config: the lab's own
// brokers check every second, scripts/real-kafka.sh and
// internal/cluster); a segment closes after segment.ms or segment.bytes,
// so a segment of a quarter of the retention makes the log start move in
// steps of about that much. segment.bytes is Kafka 4's least (1 MiB:
// 4.1 refuses less), so at the lab's rates segment.ms closes them. The
// embedded broker deletes by producer batch instead (internal/embedded).
func RetentionTopicConfig(retention time.Duration) map[string]string {
	segment := max(retention/4, time.Second)
	return map[string]string{
		"retention.ms":  strconv.FormatInt(retention.Milliseconds(), 10),
		"segment.ms":    strconv.FormatInt(segment.Milliseconds(), 10),
		"segment.bytes": "1048576",
	}
}

// RetentionLeast and RetentionMost bound --retention: under 5 s a record
// can be deleted before the audit has read it; over an hour is no lesson.
const (
	RetentionLeast = 5 * time.Second
	RetentionMost  = time.Hour
)
