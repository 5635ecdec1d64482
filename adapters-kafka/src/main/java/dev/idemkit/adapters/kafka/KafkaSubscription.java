package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.LogPosition;
import dev.idemkit.ports.out.LogPositions;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer of a work topic and its retry topics, in the topic's consumer group.
 *
 * <p>One thread polls and owns the {@code KafkaConsumer}. Records are queued per partition and handed to the
 * handler by a bounded pool, one partition at a time per worker, in offset order. A partition's committed offset is
 * the lowest offset not yet settled (or the next to fetch): the commit never passes a record that was not acked,
 * moved to a retry topic or dead-lettered, so a crash anywhere redelivers, never loses. A retry topic's head that
 * is not due yet pauses that partition until it is (other partitions, and the work topic, keep flowing). A
 * partition that holds too many fetched records is paused until its handler catches up.
 */
final class KafkaSubscription implements Subscription, KafkaDelivery.Source {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaSubscription.class);
    private static final int DRAIN_TURN = 64;
    private static final Duration POLL = Duration.ofMillis(100);
    /**
     * The poll while a partition is paused because its handler is behind: the pause is lifted by this thread only, so
     * a long poll would leave the workers idle once they caught up (measured: 0.3x kafka-consumer-perf-test).
     */
    private static final Duration POLL_WHILE_BACKPRESSURED = Duration.ofMillis(2);

    private final String topic;
    private final KafkaSettings settings;
    private final DeliveryHandler handler;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ExecutorService workers;
    private final PollThread pollThread;
    private final Map<TopicPartition, PartitionLedger> states = new ConcurrentHashMap<>();
    /** Each retry topic of the work topic, with its bucket. */
    private final Map<String, Duration> retrySchedule;
    private final Set<KafkaDelivery> handedOut = ConcurrentHashMap.newKeySet();
    private final Runnable onClosed;
    /** Whether this subscription consumes the work topic too, or only its retry topics (beside a share group's). */
    private final boolean workTopic;
    /** Offsets in the database: where the store keeps positions, and how the topics' ids are read; or null. */
    private final Positions positions;
    /** Poll thread only: when the next commit and the next check for forgotten records are due. */
    private long nextCommit;
    private long nextLeaseCheck;
    /** Each assigned topic's id as read at its assignment: a position is written for that log only. */
    private final Map<String, String> logIds = new ConcurrentHashMap<>();
    private volatile boolean closing;

    /** Where the inbox store keeps the group's positions, and the topic ids they are checked against. */
    record Positions(LogPositions store, java.util.function.Function<Collection<String>, Map<String, String>> ids) {}

    /**
     * @param workTopic false: the retry topics only, for a {@link KafkaShareSubscription} of the work topic
     * @param positions where the inbox store keeps this group's positions (offsets in the database), or null
     */
    KafkaSubscription(String topic, KafkaSettings settings, DeliveryHandler handler,
            KafkaProducer<byte[], byte[]> producer, Runnable onClosed, boolean workTopic, Positions positions) {
        this.workTopic = workTopic;
        this.positions = positions;
        this.topic = topic;
        this.settings = settings;
        this.handler = handler;
        this.producer = producer;
        this.onClosed = onClosed;
        this.retrySchedule = KafkaTopics.retrySchedule(topic, settings.retryBuckets());
        this.consumer = new KafkaConsumer<>(consumerProperties(settings, settings.group(topic)),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.pollThread = new PollThread("kafka", topic, "subscription", () -> closing, this::subscribe, this::turn,
                this::shutDown);
        this.workers = pollThread.workers(settings.concurrency());
    }

    static Properties consumerProperties(KafkaSettings settings, String group) {
        Properties p = new Properties();
        p.putAll(settings.clientProperties());
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        boolean brokerSideGroups = "consumer".equalsIgnoreCase(settings.clientProperties()
                .getOrDefault(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"));
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        if (group != null && !brokerSideGroups) { // the "consumer" protocol takes its timeouts from the broker
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) settings.sessionTimeout().toMillis());
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG,
                    (int) Math.max(500, settings.sessionTimeout().toMillis() / 3));
        }
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        // a group that never committed starts at the beginning: nothing published before it joined is skipped
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // records of aborted transactions are never handed over
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        return p;
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public KafkaSettings settings() {
        return settings;
    }

    void start() {
        pollThread.start();
    }

    @Override
    public void send(ProducerRecord<byte[], byte[]> record) {
        KafkaMessageTransport.sendAndWait(producer, record, settings.sendTimeout());
    }

    /** A delivery of {@code offset} was settled. */
    void settled(KafkaDelivery d, PartitionLedger ledger, long offset) {
        handedOut.remove(d);
        ledger.settle(offset);
    }

    /**
     * Gives the record at {@code offset} back: the partition is blocked there for {@code pause} (doubled per give-back
     * of the same record in a row), and the record and the ones after it are fetched again.
     */
    void rewind(KafkaDelivery d, PartitionLedger ledger, long offset, Duration pause) {
        handedOut.remove(d);
        PartitionLedger.GiveBack g = ledger.giveBack(offset, pause, System.currentTimeMillis());
        if (g.times() >= 5) {
            LOG.error("topic={} partition={} offset={} given back {} times in a row; next try in {} ms (a copy that"
                    + " cannot be written, or a handler that never settles it)", ledger.tp.topic(),
                    ledger.tp.partition(), offset, g.times(), g.pauseMillis());
        }
    }

    /** Poll thread: pauses and seeks every partition with a block not applied yet. */
    private void applyBlocks() {
        for (PartitionLedger ledger : states.values()) {
            java.util.OptionalLong seek = ledger.pendingSeek();
            if (seek.isPresent()) {
                try {
                    consumer.pause(List.of(ledger.tp));
                    consumer.seek(ledger.tp, seek.getAsLong());
                } catch (IllegalStateException notAssigned) {
                    // revoked meanwhile: the next owner starts from the committed offset
                }
                // only now: a seek that threw anything else (a timeout of the consumer's background thread) keeps the
                // block pending, so the partition is not resumed from where it was and the poll thread tries again
                ledger.seekApplied(seek.getAsLong());
            }
        }
    }

    /** Poll thread: gives back every delivery handed out longer ago than the settle timeout. */
    private void giveBackForgotten() {
        long limit = settings.settleTimeout().toNanos();
        long now = System.nanoTime();
        for (KafkaDelivery d : handedOut) {
            if (now - d.handedOutNanos() > limit && d.abandon()) {
                LOG.error("topic={} a delivery was not settled within {}: given back, it is handed out again (the"
                        + " inbox absorbs it if the first one still completes)", topic, settings.settleTimeout());
            }
        }
    }

    /** Poll thread, once: the work topic (unless a share group consumes it) and its retry topics, by name. */
    private void subscribe() {
        // by name: a pattern subscription matched nothing until the consumer's next metadata refresh (up to 5 min)
        // when the topics had just been created (CI saw it)
        List<String> topics = new ArrayList<>();
        if (workTopic) {
            topics.add(topic);
        }
        settings.retryBuckets().forEach(b -> topics.add(KafkaTopics.retryTopic(topic, b)));
        nextCommit = System.currentTimeMillis() + settings.commitInterval().toMillis();
        nextLeaseCheck = System.currentTimeMillis() + 1000;
        consumer.subscribe(topics, new Rebalance());
    }

    /** Poll thread, each turn: blocks and resumes applied, one poll handed out, records forgotten given back, a commit. */
    private void turn() {
        applyBlocks();
        resumeWhatIsDue();
        ConsumerRecords<byte[], byte[]> records = consumer.poll(anyBackpressured() ? POLL_WHILE_BACKPRESSURED : POLL);
        for (TopicPartition tp : records.partitions()) {
            PartitionLedger ledger = states.get(tp);
            if (ledger != null) {
                accept(ledger, records.records(tp));
            }
        }
        if (System.currentTimeMillis() >= nextLeaseCheck) {
            giveBackForgotten();
            nextLeaseCheck = System.currentTimeMillis() + 1000;
        }
        if (System.currentTimeMillis() >= nextCommit) {
            commit(false, states.values());
            nextCommit = System.currentTimeMillis() + settings.commitInterval().toMillis();
        }
    }

    private boolean anyBackpressured() {
        for (PartitionLedger ledger : states.values()) {
            if (ledger.backpressured()) {
                return true;
            }
        }
        return false;
    }

    private void resumeWhatIsDue() {
        long now = System.currentTimeMillis();
        List<TopicPartition> resume = new ArrayList<>();
        for (PartitionLedger ledger : states.values()) {
            if (ledger.resumeIfDue(now)) {
                resume.add(ledger.tp);
            }
        }
        if (!resume.isEmpty()) {
            resume.removeIf(tp -> !consumer.assignment().contains(tp));
            consumer.resume(resume);
        }
    }

    private void accept(PartitionLedger ledger, List<ConsumerRecord<byte[], byte[]>> records) {
        PartitionLedger.Accepted accepted = ledger.accept(records);
        if (accepted.scheduleDrain()) {
            workers.execute(() -> drain(ledger));
        }
        if (accepted.pause()) {
            consumer.pause(List.of(ledger.tp));
        }
    }

    /** Hands the partition's queued records to the handler in order, a turn of at most {@value #DRAIN_TURN}. */
    private void drain(PartitionLedger ledger) {
        for (int handed = 0;; handed++) {
            PartitionLedger.Next next = ledger.next(handed, DRAIN_TURN, closing, System.currentTimeMillis(),
                    this::ours);
            if (next instanceof PartitionLedger.Next.Dispatch d) {
                dispatch(ledger, d.record());
            } else {
                if (next instanceof PartitionLedger.Next.Yield) {
                    workers.execute(() -> drain(ledger)); // other partitions get a turn
                }
                return;
            }
        }
    }

    /** A retry copy this topic's group wrote (or one without the stamp, from before it existed). */
    private boolean ours(ConsumerRecord<byte[], byte[]> r) {
        String group = KafkaWire.last(r.headers(), KafkaWire.GROUP);
        return group == null || group.equals(settings.group(topic));
    }

    private void dispatch(PartitionLedger ledger, ConsumerRecord<byte[], byte[]> r) {
        KafkaDelivery delivery = new KafkaDelivery(this, new KafkaDelivery.Settle() {
            @Override
            public void settled(KafkaDelivery d, KafkaDelivery.Outcome outcome) {
                KafkaSubscription.this.settled(d, ledger, r.offset());
            }

            @Override
            public void giveBack(KafkaDelivery d, Duration pause) {
                rewind(d, ledger, r.offset(), pause);
            }

            @Override
            public Optional<LogPosition> positionAfter(KafkaDelivery d, List<? extends Delivery> together) {
                if (positions == null) {
                    return Optional.empty();
                }
                Set<Long> offsets = new java.util.HashSet<>();
                for (Delivery other : together) {
                    if (other instanceof KafkaDelivery k && k.record().topic().equals(r.topic())
                            && k.record().partition() == r.partition()) {
                        offsets.add(k.record().offset());
                    }
                }
                offsets.add(r.offset());
                String logId = logIds.get(r.topic());
                long next = ledger.positionAfter(offsets);
                return next < 0 || logId == null ? Optional.empty()
                        : Optional.of(new LogPosition(settings.group(topic), r.topic(), r.partition(), next, logId));
            }
        }, r, ledger.retryTopic());
        handedOut.add(delivery);
        try {
            handler.onDelivery(delivery);
        } catch (RuntimeException | Error e) {
            LOG.error("topic={} partition={} offset={} the handler threw without settling ({}); the record is"
                    + " fetched again in {}", r.topic(), r.partition(), r.offset(), e.toString(),
                    KafkaDelivery.REWIND_PAUSE, e);
            if (!delivery.settled()) {
                delivery.abandon();
            }
        }
    }

    private void commit(boolean sync, Collection<PartitionLedger> which) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        Map<TopicPartition, PartitionLedger> byTp = new HashMap<>();
        for (PartitionLedger ledger : which) {
            long point = ledger.commitPoint();
            if (point > ledger.lastCommitted()) {
                offsets.put(ledger.tp, new OffsetAndMetadata(point));
                byTp.put(ledger.tp, ledger);
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        if (sync) {
            try {
                consumer.commitSync(offsets, settings.sendTimeout());
                offsets.forEach((tp, o) -> byTp.get(tp).committed(o.offset()));
            } catch (WakeupException e) {
                throw e; // the caller commits again: the wakeup is spent
            } catch (RuntimeException e) {
                LOG.warn("topic={} committing {} failed ({}): those records will be delivered again", topic,
                        offsets.keySet(), e.toString());
            }
        } else {
            consumer.commitAsync(offsets, (done, error) -> {
                if (error == null) {
                    done.forEach((tp, o) -> byTp.get(tp).committed(o.offset()));
                } else {
                    LOG.debug("topic={} async commit failed ({}); the next one covers it", topic, error.toString());
                }
            });
        }
    }

    /**
     * Offsets in the database: each newly assigned partition starts at the position the inbox store committed with
     * its effects, where that is ahead of Kafka's committed offset (both say "everything before is settled", so the
     * further one is right) and not past the partition's end (a topic deleted and created again starts over: its
     * stored position is ignored, and said so). A store that cannot be read leaves Kafka's offset: records come again
     * and the inbox absorbs them.
     */
    private void seekToStoredPositions(List<TopicPartition> partitions) {
        try {
            Set<String> names = new java.util.HashSet<>();
            partitions.forEach(tp -> names.add(tp.topic()));
            Map<String, String> ids = positions.ids().apply(names);
            for (String name : names) {
                String id = ids.get(name);
                if (id == null) {
                    logIds.remove(name);
                } else {
                    logIds.put(name, id);
                }
            }
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(partitions),
                    settings.sendTimeout());
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, settings.sendTimeout());
            for (TopicPartition tp : partitions) {
                Optional<LogPosition> stored = positions.store().read(settings.group(topic), tp.topic(),
                        tp.partition());
                if (stored.isEmpty()) {
                    continue;
                }
                long next = stored.get().next();
                OffsetAndMetadata c = committed.get(tp);
                long kafka = c == null ? -1 : c.offset();
                long end = ends.getOrDefault(tp, Long.MAX_VALUE);
                if (!stored.get().logId().equals(ids.get(tp.topic()))) {
                    LOG.warn("topic={} partition={} stored position {} is of another log (topic id {}, now {}: the"
                            + " topic was created again?): ignored, Kafka's committed offset {} stands", tp.topic(),
                            tp.partition(), next, stored.get().logId(), ids.get(tp.topic()), kafka);
                } else if (next > end) {
                    LOG.warn("topic={} partition={} stored position {} is past the partition's end {}: ignored,"
                            + " Kafka's committed offset {} stands", tp.topic(), tp.partition(), next, end, kafka);
                } else if (next > kafka) {
                    consumer.seek(tp, next);
                    PartitionLedger ledger = states.get(tp);
                    if (ledger != null) {
                        ledger.startAt(next); // Kafka's offset catches up, even with nothing to fetch
                    }
                    LOG.info("topic={} partition={} starts at the stored position {} (Kafka's committed offset: {})",
                            tp.topic(), tp.partition(), next, kafka);
                }
            }
        } catch (RuntimeException e) {
            // no position is written for these topics until an assignment reads their ids: always safe
            partitions.forEach(tp -> logIds.remove(tp.topic()));
            LOG.warn("topic={} stored positions of {} not read ({}): Kafka's committed offsets stand, what comes again"
                    + " is absorbed by the inbox", topic, partitions, e.toString());
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            List<TopicPartition> fresh = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                PartitionLedger kept = states.get(tp);
                if (kept != null && !kept.revoked()) {
                    continue;
                }
                states.put(tp, new PartitionLedger(tp, Optional.ofNullable(retrySchedule.get(tp.topic())),
                        settings.maxQueuedPerPartition()));
                fresh.add(tp);
            }
            if (positions != null && !fresh.isEmpty()) {
                seekToStoredPositions(fresh);
            }
            LOG.info("topic={} assigned {}", topic, partitions);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            List<PartitionLedger> leaving = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                PartitionLedger ledger = states.get(tp);
                if (ledger != null) {
                    ledger.revoke();
                    leaving.add(ledger);
                }
            }
            awaitSettled(leaving, settings.closeGrace());
            commit(true, leaving);
            leaving.forEach(ledger -> states.remove(ledger.tp, ledger));
            LOG.info("topic={} revoked {}", topic, partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                PartitionLedger ledger = states.remove(tp);
                if (ledger != null) {
                    ledger.revoke();
                }
            }
            LOG.warn("topic={} lost {} (another consumer owns them now; what was in flight comes again there)",
                    topic, partitions);
        }
    }

    /** Waits until every record handed to the handler is settled, or {@code grace} has passed. */
    private static void awaitSettled(Collection<PartitionLedger> which, Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        while (System.nanoTime() < deadline && !which.stream().allMatch(PartitionLedger::dispatchedAllSettled)) {
            PollThread.sleepQuietly(10);
        }
    }

    private void shutDown() {
        closing = true;
        awaitSettled(states.values(), settings.closeGrace());
        try {
            try {
                commit(true, states.values());
            } catch (WakeupException e) {
                commit(true, states.values()); // close() woke the consumer outside poll: the wakeup is spent now
            }
        } catch (RuntimeException e) {
            // what was not committed is fetched again by the next owner (the inbox absorbs it); the close goes on
            LOG.warn("topic={} final commit failed: {}", topic, e.toString());
        }
        try {
            consumer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            LOG.warn("topic={} closing the consumer failed: {}", topic, e.toString());
        }
        PollThread.stopWorkers(workers, settings.closeGrace());
        onClosed.run();
    }

    @Override
    public void close() {
        closing = true;
        consumer.wakeup();
        pollThread.awaitStopped(settings.closeGrace().multipliedBy(2).plusSeconds(30));
    }
}
