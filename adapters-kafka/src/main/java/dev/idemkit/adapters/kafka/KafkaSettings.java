package dev.idemkit.adapters.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How idemkit talks to Kafka.
 *
 * @param bootstrapServers {@code host:port[,host:port...]}
 * @param groupPrefix consumer groups are {@code <groupPrefix>.<topic>}: one group per work topic, shared by every
 *     process consuming it
 * @param partitions partitions of the topics idemkit creates (work, retry and dead-letter topics)
 * @param replicationFactor replication of the topics idemkit creates; {@link #BROKER_DEFAULT_REPLICATION} (the
 *     default) leaves it to the broker's {@code default.replication.factor}, as Kafka's own tools do, so that a
 *     cluster whose operator replicates new topics three times is not handed unreplicated ones
 * @param concurrency partitions handled in parallel by one subscription (records of one partition: in order)
 * @param retryBuckets the delays of the retry topics {@code <topic>.retry.<seconds>s}, ascending; a retry waits in
 *     the smallest bucket not shorter than its delay, a longer delay is shortened to the largest
 * @param maxQueuedPerPartition fetched records waiting per partition before the partition is paused (also paused past
 *     8 MB of keys and values); 10,000 by default: at 1,000 the poll thread paused the partitions so often that the
 *     subscription ran at 0.3-0.4x kafka-consumer-perf-test, at 10,000 at 0.9x
 * @param commitInterval how often settled offsets are committed
 * @param sessionTimeout the consumer's group session: how long a dead consumer keeps its partitions
 * @param sendTimeout how long a publish (or a retry, dead-letter or redrive copy) waits for the broker's ack
 * @param closeGrace how long closing a subscription waits for handed-out records to settle
 * @param settleTimeout how long a handed-out record may stay unsettled before it is given back (fetched and handed
 *     out again; Kafka has no visibility timeout, so without this a handler that forgets one record would pin its
 *     partition's commit for good)
 * @param clientProperties passed to every client (security, TLS, client.id, ...); idemkit's own settings win
 * @param consumption how a work topic is consumed: {@link Consumption#GROUP} (a consumer group, partitions in order,
 *     the default) or {@link Consumption#SHARE} (a share group: queue semantics, any number of consumers per partition,
 *     no order)
 */
public record KafkaSettings(String bootstrapServers, String groupPrefix, int partitions, short replicationFactor,
        int concurrency, List<Duration> retryBuckets, int maxQueuedPerPartition, Duration commitInterval,
        Duration sessionTimeout, Duration sendTimeout, Duration closeGrace, Duration settleTimeout,
        Map<String, String> clientProperties, Consumption consumption) {

    /** How a subscription consumes its work topic (its retry topics are always consumed by the consumer group). */
    public enum Consumption {
        /** The consumer group {@link #group}: a partition to one consumer, in order; commit after settle. */
        GROUP,
        /**
         * The share group {@link #shareGroup} (KIP-932): records acquired one by one, by any number of consumers, in no
         * order; each acknowledged after its settle.
         */
        SHARE
    }

    public static final List<Duration> DEFAULT_BUCKETS = List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
            Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10));

    /** {@link #replicationFactor()}: the broker's {@code default.replication.factor}. */
    public static final short BROKER_DEFAULT_REPLICATION = -1;

    public KafkaSettings {
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("kafka bootstrap servers are required (host:port[,host:port...])");
        }
        if (groupPrefix == null || groupPrefix.isBlank()) {
            throw new IllegalArgumentException("the consumer group prefix must not be blank");
        }
        if (partitions < 1 || concurrency < 1 || maxQueuedPerPartition < 1) {
            throw new IllegalArgumentException("partitions, concurrency and queued records must be positive, got "
                    + partitions + ", " + concurrency + ", " + maxQueuedPerPartition);
        }
        if (replicationFactor < 1 && replicationFactor != BROKER_DEFAULT_REPLICATION) {
            throw new IllegalArgumentException("the replication factor must be positive, or "
                    + BROKER_DEFAULT_REPLICATION + " for the broker's default, got " + replicationFactor);
        }
        retryBuckets = List.copyOf(Objects.requireNonNull(retryBuckets, "retryBuckets"));
        if (retryBuckets.isEmpty()) {
            throw new IllegalArgumentException("at least one retry bucket is needed");
        }
        List<Duration> sorted = new ArrayList<>(retryBuckets);
        sorted.sort(null);
        for (int i = 0; i < sorted.size(); i++) {
            Duration b = sorted.get(i);
            if (b.isNegative() || b.isZero() || b.toMillis() % 1000 != 0 || (i > 0 && b.equals(sorted.get(i - 1)))) {
                throw new IllegalArgumentException("retry buckets must be distinct whole positive seconds, got "
                        + retryBuckets);
            }
        }
        if (!sorted.equals(retryBuckets)) {
            throw new IllegalArgumentException("retry buckets must be ascending, got " + retryBuckets);
        }
        requirePositive("commitInterval", commitInterval);
        requirePositive("sessionTimeout", sessionTimeout);
        requirePositive("sendTimeout", sendTimeout);
        Objects.requireNonNull(closeGrace, "closeGrace");
        requirePositive("settleTimeout", settleTimeout);
        clientProperties = Map.copyOf(Objects.requireNonNull(clientProperties, "clientProperties"));
        Objects.requireNonNull(consumption, "consumption");
    }

    /** Defaults for a broker at {@code bootstrapServers}. */
    public static KafkaSettings defaults(String bootstrapServers) {
        return new KafkaSettings(bootstrapServers, "idemkit", 3, BROKER_DEFAULT_REPLICATION, 8, DEFAULT_BUCKETS, 10_000,
                Duration.ofMillis(200), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(10),
                Duration.ofMinutes(5), Map.of(), Consumption.GROUP);
    }

    public KafkaSettings withGroupPrefix(String prefix) {
        return new KafkaSettings(bootstrapServers, prefix, partitions, replicationFactor, concurrency, retryBuckets,
                maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, consumption);
    }

    public KafkaSettings withPartitions(int n) {
        return new KafkaSettings(bootstrapServers, groupPrefix, n, replicationFactor, concurrency, retryBuckets,
                maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, consumption);
    }

    /** {@code n} replicas of each topic idemkit creates, or {@link #BROKER_DEFAULT_REPLICATION}. */
    public KafkaSettings withReplicationFactor(short n) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, n, concurrency, retryBuckets,
                maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, consumption);
    }

    public KafkaSettings withConcurrency(int n) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, n, retryBuckets,
                maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, consumption);
    }

    public KafkaSettings withRetryBuckets(List<Duration> buckets) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, concurrency, buckets,
                maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, consumption);
    }

    public KafkaSettings withCloseGrace(Duration grace) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, concurrency,
                retryBuckets, maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, grace, settleTimeout,
                clientProperties, consumption);
    }

    public KafkaSettings withSessionTimeout(Duration timeout) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, concurrency,
                retryBuckets, maxQueuedPerPartition, commitInterval, timeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, consumption);
    }

    public KafkaSettings withSettleTimeout(Duration timeout) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, concurrency,
                retryBuckets, maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, timeout,
                clientProperties, consumption);
    }

    public KafkaSettings withClientProperties(Map<String, String> properties) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, concurrency,
                retryBuckets, maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                properties, consumption);
    }

    public KafkaSettings withConsumption(Consumption how) {
        return new KafkaSettings(bootstrapServers, groupPrefix, partitions, replicationFactor, concurrency,
                retryBuckets, maxQueuedPerPartition, commitInterval, sessionTimeout, sendTimeout, closeGrace, settleTimeout,
                clientProperties, how);
    }

    /** The consumer group of a work topic (in share consumption: of its retry topics). */
    public String group(String topic) {
        return groupPrefix + "." + topic;
    }

    /**
     * The share group of a work topic: a group id names one kind of group only, so it is not the consumer group's
     * (which consumes the topic's retry topics).
     */
    public String shareGroup(String topic) {
        return group(topic) + ".share";
    }

    private static void requirePositive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + d);
        }
    }
}
