package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.TransportException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The topics of one work topic {@code T}: {@code T}, a retry topic per bucket {@code T.retry.<seconds>s}, the
 * dead-letter topic {@code T.dlt} and {@code T.dlt.redriven}, the compacted record of which dead letters were
 * redriven (Kafka cannot delete one record from a topic). Created on first use, idempotently.
 */
final class KafkaTopics {
    /** Kafka's limit on a topic name, less the longest suffix idemkit adds. */
    static final int MAX_WORK_TOPIC = 249 - ".dlt.redriven".length();
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final Admin admin;
    private final KafkaSettings settings;
    private final Set<String> ensured = ConcurrentHashMap.newKeySet();

    KafkaTopics(Admin admin, KafkaSettings settings) {
        this.admin = admin;
        this.settings = settings;
    }

    static String validWorkTopic(String topic) {
        if (topic == null || topic.isEmpty() || topic.length() > MAX_WORK_TOPIC || topic.equals(".")
                || topic.equals("..") || !topic.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                        || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')) {
            throw new IllegalArgumentException("not a usable Kafka topic name (letters, digits, '.', '_', '-', at most "
                    + MAX_WORK_TOPIC + "): " + topic);
        }
        if (topic.contains(".retry.") || topic.endsWith(".dlt") || topic.endsWith(".dlt.redriven")) {
            throw new IllegalArgumentException("a work topic cannot be named like one of idemkit's own: " + topic);
        }
        return topic;
    }

    static String retryTopic(String topic, Duration bucket) {
        return topic + ".retry." + bucket.toSeconds() + "s";
    }

    static String deadLetterTopic(String topic) {
        return topic + ".dlt";
    }

    static String redrivenTopic(String topic) {
        return topic + ".dlt.redriven";
    }

    /** The bucket a retry after {@code delay} waits in: the smallest not shorter than it, else the largest. */
    static Duration bucketFor(List<Duration> buckets, Duration delay) {
        for (Duration b : buckets) {
            if (b.compareTo(delay) >= 0) {
                return b;
            }
        }
        return buckets.get(buckets.size() - 1);
    }

    /** The retry schedule of {@code work}: each of its retry topics, with the bucket its copies wait. */
    static Map<String, Duration> retrySchedule(String work, List<Duration> buckets) {
        Map<String, Duration> schedule = new java.util.LinkedHashMap<>();
        for (Duration b : buckets) {
            schedule.put(retryTopic(work, b), b);
        }
        return Map.copyOf(schedule);
    }

    /**
     * When a retry copy waiting in {@code bucket} is due: its due-time header, but never later than its write time (the
     * broker's, on retry topics idemkit creates) plus its bucket, so a wrong clock or a forged header cannot hold a
     * bucket back; a copy without a readable due time is due now.
     */
    static long dueAt(org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> r, Duration bucket) {
        long latest = r.timestamp() + bucket.toMillis();
        try {
            return Math.min(Long.parseLong(KafkaWire.last(r.headers(), KafkaWire.DUE_AT)), latest);
        } catch (RuntimeException unreadable) {
            return 0;
        }
    }

    /** The work topic a retry topic belongs to, if {@code topic} is one of {@code work}'s retry topics. */
    static boolean isRetryTopicOf(String topic, String work, List<Duration> buckets) {
        for (Duration b : buckets) {
            if (topic.equals(retryTopic(work, b))) {
                return true;
            }
        }
        return false;
    }

    List<String> all(String topic) {
        List<String> names = new ArrayList<>();
        names.add(topic);
        settings.retryBuckets().forEach(b -> names.add(retryTopic(topic, b)));
        names.add(deadLetterTopic(topic));
        names.add(redrivenTopic(topic));
        return names;
    }

    /**
     * The topic ids of {@code names} as the cluster says now (a topic deleted and created again has a new one): what a
     * stored position is checked against (offsets in the database).
     *
     * @throws TransportException when the cluster does not answer
     */
    Map<String, String> ids(java.util.Collection<String> names) {
        try {
            Map<String, String> ids = new java.util.HashMap<>();
            admin.describeTopics(names).allTopicNames().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .forEach((name, d) -> ids.put(name, d.topicId().toString()));
            return ids;
        } catch (ExecutionException e) {
            throw new TransportException("could not describe " + names + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while describing " + names, e);
        } catch (TimeoutException e) {
            throw new TransportException("the broker did not describe " + names + " within " + ADMIN_TIMEOUT, e);
        }
    }

    /** Creates every topic of {@code topic} that is missing. */
    void ensure(String topic) {
        validWorkTopic(topic);
        if (ensured.contains(topic)) {
            return;
        }
        List<NewTopic> wanted = new ArrayList<>();
        for (String name : all(topic)) {
            NewTopic t = new NewTopic(name, Optional.of(settings.partitions()),
                    settings.replicationFactor() == KafkaSettings.BROKER_DEFAULT_REPLICATION ? Optional.empty()
                            : Optional.of(settings.replicationFactor()));
            if (name.equals(redrivenTopic(topic))) {
                t.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
            } else if (name.contains(".retry.")) {
                // the broker's clock stamps a retry copy: its due time is capped by that stamp plus the bucket
                t.configs(Map.of(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "LogAppendTime"));
            }
            wanted.add(t);
        }
        var result = admin.createTopics(wanted);
        for (var e : result.values().entrySet()) {
            try {
                e.getValue().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException ex) {
                if (!(ex.getCause() instanceof TopicExistsException)) {
                    throw new TransportException("could not create topic " + e.getKey() + ": " + ex.getCause(),
                            ex.getCause());
                }
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new TransportException("interrupted while creating the topics of " + topic, ex);
            } catch (TimeoutException ex) {
                throw new TransportException("the broker did not create the topics of " + topic + " within "
                        + ADMIN_TIMEOUT, ex);
            }
        }
        ensured.add(topic);
    }

    boolean exists(String name) {
        try {
            return admin.listTopics().names().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).contains(name);
        } catch (ExecutionException | TimeoutException e) {
            throw new TransportException("could not list the broker's topics", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while listing topics", e);
        }
    }

    /**
     * The partitions of {@code name} as the broker describes them (empty when there is no such topic). Asked of the
     * admin client: a consumer's {@code partitionsFor} waits for a metadata refresh on a topic it has not seen yet
     * (half a second here, on every read of a dead-letter topic).
     */
    List<org.apache.kafka.common.TopicPartition> partitionsOf(String name) {
        try {
            var d = admin.describeTopics(List.of(name)).allTopicNames().get(ADMIN_TIMEOUT.toMillis(),
                    TimeUnit.MILLISECONDS).get(name);
            return d == null ? List.of() : d.partitions().stream()
                    .map(p -> new org.apache.kafka.common.TopicPartition(name, p.partition())).toList();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                return List.of();
            }
            throw new TransportException("could not describe topic " + name, e.getCause());
        } catch (TimeoutException e) {
            throw new TransportException("could not describe topic " + name + " within " + ADMIN_TIMEOUT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while describing topic " + name, e);
        }
    }

    /** {@code retention.ms} of a topic as the broker reports it; empty for -1 (kept forever) or no topic. */
    Optional<Duration> retention(String name) {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, name);
        try {
            Config config = admin.describeConfigs(List.of(r)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .get(r);
            ConfigEntry e = config == null ? null : config.get(TopicConfig.RETENTION_MS_CONFIG);
            if (e == null || e.value() == null) {
                return Optional.empty();
            }
            long ms = Long.parseLong(e.value());
            return ms < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(ms));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw new TransportException("the retention of " + name + " is unavailable", e.getCause());
        } catch (TimeoutException | NumberFormatException e) {
            throw new TransportException("the retention of " + name + " is unavailable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while reading the retention of " + name, e);
        }
    }

    /** Deletes every topic of {@code topic} (tests, tear-down); missing ones are ignored. */
    void delete(String topic) {
        ensured.remove(topic);
        try {
            admin.deleteTopics(all(topic)).topicNameValues().forEach((name, f) -> {
                try {
                    f.get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw new TransportException("could not delete " + name, e.getCause());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new TransportException("interrupted while deleting " + name, e);
                } catch (TimeoutException e) {
                    throw new TransportException("could not delete " + name + " within " + ADMIN_TIMEOUT, e);
                }
            });
        } catch (RuntimeException e) {
            if (e instanceof TransportException t) {
                throw t;
            }
            throw new TransportException("could not delete the topics of " + topic, e);
        }
    }
}
