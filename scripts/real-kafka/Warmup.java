// Warm-up for a freshly started broker, run by scripts/real-kafka.sh.
//
// It makes real Kafka requests with Kafka's own Java admin client (which retries
// NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS by itself):
//   1. DescribeCluster: the broker answers Kafka requests;
//   2. OffsetFetch for one group: makes the broker create __consumer_offsets
//      (it is created on the first FindCoordinator) and waits for it to load;
//   3. OffsetFetch for one group per __consumer_offsets partition: every group
//      coordinator partition is loaded and active.
//
// Why: right after __consumer_offsets is created (or while it loads after a
// restart) the broker answers OffsetFetch with a group-level NOT_COORDINATOR,
// and librdkafka (confluent-kafka-go v2.11.1) crashes the whole process with
// SIGSEGV on that answer in AdminClient.ListConsumerGroupOffsets (librdkafka
// issue 5040). After this warm-up the answer is the normal one.
//
// Usage: java -cp KAFKA_CLASSPATH:DIR Warmup BOOTSTRAP TIMEOUT_SECONDS
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.TopicDescription;

public final class Warmup {
    private static final String OFFSETS_TOPIC = "__consumer_offsets";

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Warmup BOOTSTRAP TIMEOUT_SECONDS");
            System.exit(2);
        }
        String bootstrap = args[0];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[1]));

        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "krl-real-kafka-warmup");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(remainingMs(deadline)));

        try (Admin admin = Admin.create(props)) {
            int nodes = admin.describeCluster().nodes().get(remainingMs(deadline), TimeUnit.MILLISECONDS).size();

            admin.listConsumerGroupOffsets("krl-real-kafka-warmup")
                .partitionsToOffsetAndMetadata()
                .get(remainingMs(deadline), TimeUnit.MILLISECONDS);

            TopicDescription offsets = admin.describeTopics(List.of(OFFSETS_TOPIC))
                .allTopicNames()
                .get(remainingMs(deadline), TimeUnit.MILLISECONDS)
                .get(OFFSETS_TOPIC);
            int partitions = offsets.partitions().size();

            // The group coordinator maps a group to partition abs(hashCode) % n.
            Map<String, ListConsumerGroupOffsetsSpec> groups = new HashMap<>();
            boolean[] covered = new boolean[partitions];
            int left = partitions;
            for (int i = 0; left > 0 && i < 100_000; i++) {
                String group = "krl-real-kafka-warmup-" + i;
                int hash = group.hashCode();
                int p = (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % partitions;
                if (!covered[p]) {
                    covered[p] = true;
                    left--;
                    groups.put(group, new ListConsumerGroupOffsetsSpec());
                }
            }
            admin.listConsumerGroupOffsets(groups).all().get(remainingMs(deadline), TimeUnit.MILLISECONDS);

            System.out.printf("warm: %d broker(s), %d %s partitions with an active group coordinator%n",
                nodes, partitions, OFFSETS_TOPIC);
        }
    }

    private static long remainingMs(long deadline) {
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (ms <= 0) {
            throw new IllegalStateException("warm-up timed out");
        }
        return ms;
    }
}
