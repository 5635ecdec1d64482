package dev.idemkit.ports.out;

import java.util.Objects;

/**
 * Where a consumer group stands in one partition of a log (a Kafka topic): every record of {@code topic}-{@code
 * partition} before offset {@code next} is settled. A store that keeps positions writes one in the same transaction
 * as the effects it covers, so that the commit of an effect is the commit of its offset (docs/ARCHITECTURE.md section
 * 14); the consumer seeks to it when it is given the partition.
 *
 * @param group the consumer group
 * @param topic the topic (a work topic or one of its retry topics)
 * @param partition the partition
 * @param next the first offset not known to be settled
 * @param logId which log of that name the offset is in (Kafka's topic id): a topic deleted and created again, or a
 *     topic of another cluster, has another id, and a position of the old one means nothing in the new one
 */
public record LogPosition(String group, String topic, int partition, long next, String logId) {
    public LogPosition {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(logId, "logId");
        if (group.isEmpty() || topic.isEmpty() || logId.isEmpty() || partition < 0 || next < 0) {
            throw new IllegalArgumentException("a log position needs a group, a topic, a log id, a partition >= 0 and"
                    + " an offset >= 0, got " + group + " " + topic + "-" + partition + "@" + next + " (" + logId + ")");
        }
    }

    /** Whether {@code other} is the same group's position in the same partition of the same log. */
    public boolean samePartition(LogPosition other) {
        return group.equals(other.group) && topic.equals(other.topic) && partition == other.partition
                && logId.equals(other.logId);
    }
}
