package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.TransportException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.HashMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * The group configuration a share group needs before its first consumer joins, set through the admin client:
 * <ul>
 *   <li>{@code share.auto.offset.reset=earliest}: a share group starts at the end of its topic by default, so records
 *       published before its first consumer joined would never be delivered;
 *   <li>{@code share.isolation.level=read_committed}: records of aborted transactions are never handed over, as in a
 *       consumer group;
 * </ul>
 * its start where the topic's consumer group left off, when it has consumed the topic before; and the delivery-count
 * limit the broker applies to the group ({@code share.delivery.count.limit}, else the broker's
 * {@code group.share.delivery.count.limit}, 5 by default), which {@link KafkaShareSubscription} needs to dead-letter a
 * record on its last delivery instead of letting the broker archive it unseen.
 */
final class KafkaShareGroups {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaShareGroups.class);
    static final String AUTO_OFFSET_RESET = "share.auto.offset.reset";
    static final String ISOLATION_LEVEL = "share.isolation.level";
    static final String DELIVERY_COUNT_LIMIT = "share.delivery.count.limit";
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final Admin admin;

    KafkaShareGroups(Admin admin) {
        this.admin = admin;
    }

    /**
     * Sets the group's start and isolation (idempotently; the start applies when the group is first initialised). A
     * share group that has no start yet, for a topic its consumer group {@code consumerGroup} has consumed before,
     * starts where that consumer group's commits are (a switch from group to share consumption): from the earliest
     * record it would re-read what was processed, beyond what the inbox still remembers when the topic is kept longer
     * than the inbox's retention.
     */
    void prepare(String group, String consumerGroup, String topic) {
        ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
        List<AlterConfigOp> ops = List.of(
                new AlterConfigOp(new ConfigEntry(AUTO_OFFSET_RESET, "earliest"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry(ISOLATION_LEVEL, "read_committed"), AlterConfigOp.OpType.SET));
        await(admin.incrementalAlterConfigs(Map.of(r, ops)).all(), "configure share group " + group);
        startWhereTheConsumerGroupIs(group, consumerGroup, topic);
    }

    private void startWhereTheConsumerGroupIs(String group, String consumerGroup, String topic) {
        Map<TopicPartition, Long> committed = new HashMap<>();
        await(admin.listConsumerGroupOffsets(consumerGroup).partitionsToOffsetAndMetadata(),
                "read the offsets of consumer group " + consumerGroup).forEach((tp, o) -> {
                    if (o != null && tp.topic().equals(topic)) {
                        committed.put(tp, o.offset());
                    }
                });
        if (committed.isEmpty() || !shareStart(group).isEmpty()) {
            return;
        }
        try {
            await(admin.alterShareGroupOffsets(group, committed).all(), "start share group " + group
                    + " at consumer group " + consumerGroup + "'s offsets");
            LOG.info("share group {} starts where consumer group {} committed: {}", group, consumerGroup, committed);
        } catch (TransportException e) {
            LOG.warn("share group {} could not be started at consumer group {}'s offsets ({}); it starts at the earliest"
                    + " record, and the inbox absorbs what was processed before within its retention", group,
                    consumerGroup, e.getMessage());
        }
    }

    /** The share group's start offsets; empty for a group that has none yet (or does not exist). */
    private Map<TopicPartition, Long> shareStart(String group) {
        try {
            Map<TopicPartition, Long> out = new HashMap<>();
            await(admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group), "read the offsets of share group " + group).forEach((tp, info) -> {
                        if (info != null) {
                            out.put(tp, info.startOffset());
                        }
                    });
            return out;
        } catch (TransportException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Map.of();
            }
            throw e;
        }
    }

    /** The delivery-count limit in force for {@code group}, as the broker reports it. */
    int deliveryCountLimit(String group) {
        ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
        Config config = await(admin.describeConfigs(List.of(r)).all(), "read the configuration of share group "
                + group).get(r);
        ConfigEntry e = config == null ? null : config.get(DELIVERY_COUNT_LIMIT);
        if (e == null || e.value() == null) {
            throw new TransportException("the broker did not report " + DELIVERY_COUNT_LIMIT + " for share group " + group
                    + " (a broker older than Kafka 4.2 has no share groups)");
        }
        try {
            return Integer.parseInt(e.value());
        } catch (NumberFormatException bad) {
            throw new TransportException("unreadable " + DELIVERY_COUNT_LIMIT + " for share group " + group + ": "
                    + e.value(), bad);
        }
    }

    /**
     * Deletes a share group with no members (tests, tear-down), at best: a missing or still busy group, or a broker that
     * does not answer within 10 s, is logged and left (a share group whose topic is gone holds nothing; a .ci/run saw
     * the deletion time out after 30 s right after the group's last consumer left).
     */
    void delete(String group) {
        try {
            admin.deleteShareGroups(List.of(group)).all().get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                LOG.warn("share group {} not deleted: {}", group, e.getCause().toString());
            }
        } catch (TimeoutException e) {
            LOG.warn("share group {} not deleted within 10 s; left on the broker", group);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static <T> T await(org.apache.kafka.common.KafkaFuture<T> f, String what) {
        try {
            return f.get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new TransportException("could not " + what + ": " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new TransportException("could not " + what + " within " + ADMIN_TIMEOUT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while trying to " + what, e);
        }
    }
}
