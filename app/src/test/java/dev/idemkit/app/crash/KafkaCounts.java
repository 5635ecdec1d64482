package dev.idemkit.app.crash;

import dev.idemkit.adapters.kafka.KafkaSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What a Kafka consumer group has not committed yet in a work topic and its retry topics, read beside the adapter; with
 * share consumption, the work topic's records from its share group's start offset (every record before it is
 * acknowledged or archived), counted by the share group's lag.
 */
public final class KafkaCounts implements AutoCloseable {
    private final Admin admin;
    private final KafkaSettings settings;
    private final Map<String, Known> partitions = new java.util.concurrent.ConcurrentHashMap<>();

    public KafkaCounts(KafkaSettings settings) {
        this.settings = settings;
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        this.admin = Admin.create(p);
    }

    /** Records of {@code topic} and its retry topics past the group's committed offsets (from the start when none). */
    public long pending(String topic) throws Exception {
        List<String> names = new ArrayList<>();
        names.add(topic);
        for (Duration b : settings.retryBuckets()) {
            names.add(topic + ".retry." + b.toSeconds() + "s");
        }
        List<TopicPartition> parts = partitions(topic, names);
        if (parts.isEmpty()) {
            return 0;
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        parts.forEach(tp -> {
            latest.put(tp, OffsetSpec.latest());
            earliest.put(tp, OffsetSpec.earliest());
        });
        var ends = admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS);
        var starts = admin.listOffsets(earliest).all().get(30, TimeUnit.SECONDS);
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(settings.group(topic))
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        // a share partition's lag (records not acknowledged yet): its persisted start offset lags behind the
        // acknowledgements (it stayed at 3 with all 30 records of a partition accepted, lag 0)
        Map<TopicPartition, Long> shareLag = new HashMap<>();
        if (settings.consumption() == KafkaSettings.Consumption.SHARE) {
            String group = settings.shareGroup(topic);
            admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group)
                    .get(30, TimeUnit.SECONDS).forEach((tp, info) -> {
                        if (info != null) {
                            shareLag.put(tp, info.lag().orElse(ends.get(tp).offset() - info.startOffset()));
                        }
                    });
        }
        long n = 0;
        for (TopicPartition tp : parts) {
            if (settings.consumption() == KafkaSettings.Consumption.SHARE && tp.topic().equals(topic)) {
                // a partition the share group never read: every record in it is pending
                n += shareLag.getOrDefault(tp, ends.get(tp).offset() - starts.get(tp).offset());
                continue;
            }
            OffsetAndMetadata c = committed.get(tp);
            long from = c == null ? starts.get(tp).offset() : c.offset();
            n += Math.max(0, ends.get(tp).offset() - from);
        }
        return n;
    }

    /**
     * The partitions of those of {@code names} that exist, remembered for a second: the harness asks many times a
     * second while it waits, and a retry topic appears only when the first retry is published.
     */
    private List<TopicPartition> partitions(String topic, List<String> names) throws Exception {
        Known known = partitions.get(topic);
        if (known != null && System.nanoTime() - known.at() < TimeUnit.SECONDS.toNanos(1)) {
            return known.parts();
        }
        Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
        List<String> there = names.stream().filter(existing::contains).toList();
        List<TopicPartition> parts = new ArrayList<>();
        if (!there.isEmpty()) {
            for (TopicDescription d : admin.describeTopics(there).allTopicNames().get(30, TimeUnit.SECONDS).values()) {
                d.partitions().forEach(p -> parts.add(new TopicPartition(d.name(), p.partition())));
            }
        }
        partitions.put(topic, new Known(List.copyOf(parts), System.nanoTime()));
        return parts;
    }

    /** Sets group configuration of the work topic's share group (before its first consumer joins). */
    void configureShareGroup(String topic, Map<String, String> values) throws Exception {
        List<AlterConfigOp> ops = values.entrySet().stream().map(e -> new AlterConfigOp(
                new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET)).toList();
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, settings.shareGroup(topic)),
                ops)).all().get(30, TimeUnit.SECONDS);
    }

    private record Known(List<TopicPartition> parts, long at) {}

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
