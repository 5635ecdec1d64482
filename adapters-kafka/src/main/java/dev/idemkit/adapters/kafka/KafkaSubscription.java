package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
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
final class KafkaSubscription implements Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaSubscription.class);
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final int DRAIN_TURN = 64;
    private static final Duration POLL = Duration.ofMillis(100);
    /**
     * The poll while a partition is paused because its handler is behind: the pause is lifted by this thread only, so
     * a long poll would leave the workers idle once they caught up (measured: 0.3x kafka-consumer-perf-test).
     */
    private static final Duration POLL_WHILE_BACKPRESSURED = Duration.ofMillis(2);
    /** Bytes of fetched records (keys and values) queued per partition before it is paused, beside the record count. */
    static final long MAX_QUEUED_BYTES = 8L * 1024 * 1024;
    private static final Duration MAX_REWIND_PAUSE = Duration.ofMinutes(5);

    /** What the subscription knows of one assigned partition; the fields without volatile are guarded by it. */
    static final class PartitionState {
        final TopicPartition tp;
        final boolean retryTopic;
        final ArrayDeque<ConsumerRecord<byte[], byte[]>> queued = new ArrayDeque<>();
        long queuedBytes;
        /** Offsets fetched and not settled: dispatched or still queued. */
        final ConcurrentSkipListSet<Long> unsettled = new ConcurrentSkipListSet<>();
        long fetchedUpTo = -1;
        long dispatchedUpTo = -1;
        /** Records from here on are dropped until the poll thread has sought back here and the pause is over. */
        long blockedAt = -1;
        /** A block the poll thread has not applied yet (pause + seek to {@code blockedAt}); it is not lifted before. */
        boolean seekPending;
        long resumeAtMillis;
        boolean scheduled;
        boolean backpressured;
        long lastCommitted = -1;
        volatile boolean revoked;
        /** How often each record was given back in a row: its pause doubles, so a write that never succeeds backs off. */
        final Map<Long, Integer> givenBack = new ConcurrentHashMap<>();

        PartitionState(TopicPartition tp, boolean retryTopic) {
            this.tp = tp;
            this.retryTopic = retryTopic;
        }

        /** The offset a commit may name: every record below it is settled. -1 when nothing was fetched. */
        synchronized long commitPoint() {
            if (fetchedUpTo < 0) {
                return -1;
            }
            Long first = unsettled.ceiling(Long.MIN_VALUE);
            return first == null ? fetchedUpTo : Math.min(first, fetchedUpTo);
        }

        synchronized boolean dispatchedAllSettled() {
            Long first = unsettled.ceiling(Long.MIN_VALUE);
            return first == null || first >= dispatchedUpTo;
        }
    }

    private final String topic;
    private final KafkaSettings settings;
    private final DeliveryHandler handler;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ExecutorService workers;
    private final Thread pollThread;
    private final Map<TopicPartition, PartitionState> states = new ConcurrentHashMap<>();
    private final Set<KafkaDelivery> handedOut = ConcurrentHashMap.newKeySet();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Runnable onClosed;
    private volatile boolean closing;

    KafkaSubscription(String topic, KafkaSettings settings, DeliveryHandler handler,
            KafkaProducer<byte[], byte[]> producer, Runnable onClosed) {
        this.topic = topic;
        this.settings = settings;
        this.handler = handler;
        this.producer = producer;
        this.onClosed = onClosed;
        this.consumer = new KafkaConsumer<>(consumerProperties(settings, settings.group(topic)),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        int n = SEQ.incrementAndGet();
        AtomicInteger worker = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(settings.concurrency(), r -> {
            Thread t = new Thread(r, "idemkit-kafka-" + n + "-worker-" + worker.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.pollThread = new Thread(this::pollLoop, "idemkit-kafka-" + n + "-poll-" + topic);
        this.pollThread.setDaemon(true);
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

    String topic() {
        return topic;
    }

    KafkaSettings settings() {
        return settings;
    }

    void start() {
        pollThread.start();
    }

    /** Writes a copy and waits for the broker's ack. */
    void send(ProducerRecord<byte[], byte[]> record) {
        KafkaMessageTransport.sendAndWait(producer, record, settings.sendTimeout());
    }

    /** A delivery of {@code offset} was settled. */
    void settled(KafkaDelivery d, PartitionState s, long offset) {
        handedOut.remove(d);
        s.unsettled.remove(offset);
        if (!s.givenBack.isEmpty()) { // almost always empty: no boxing on the ack path
            s.givenBack.remove(offset);
        }
    }

    /**
     * Drops what is queued at and after {@code offset} and has the poll thread seek there, pausing the partition for
     * {@code pause}: the record at {@code offset} and the ones after it are fetched again.
     */
    void rewind(KafkaDelivery d, PartitionState s, long offset, Duration pause) {
        handedOut.remove(d);
        if (s.givenBack.size() > 10_000) {
            s.givenBack.clear();
        }
        int times = s.givenBack.merge(offset, 1, Integer::sum);
        long millis = Math.min(MAX_REWIND_PAUSE.toMillis(), pause.toMillis() << Math.min(20, times - 1));
        if (times >= 5) {
            LOG.error("topic={} partition={} offset={} given back {} times in a row; next try in {} ms (a copy that"
                    + " cannot be written, or a handler that never settles it)", s.tp.topic(), s.tp.partition(), offset,
                    times, millis);
        }
        block(s, offset, System.currentTimeMillis() + millis);
    }

    /**
     * Every offset from {@code offset} on is dropped from the queue and from the unsettled set: safe, since the
     * commit point is capped by {@code fetchedUpTo}, which goes back to {@code offset} (and stays at or below the
     * block) until they are fetched again. The pause and the seek are applied by the poll thread from this state
     * ({@link #applyBlocks}), so two blocks applied in any order seek to the lower offset, and a block is never
     * lifted before its seek.
     */
    private void block(PartitionState s, long offset, long resumeAtMillis) {
        synchronized (s) {
            s.unsettled.remove(offset);
            // never seek forward: when the fetch has not reached the record again yet (a late give-back of an earlier
            // delivery), go back to where the fetch is, so nothing between is skipped
            long target = Math.min(offset, s.fetchedUpTo);
            s.fetchedUpTo = target;
            if (s.revoked || (s.blockedAt >= 0 && s.blockedAt <= target)) {
                return; // leaving (the next owner fetches it), or already going back to an earlier record
            }
            // only what is queued from the target on is dropped (and fetched again); earlier records stay queued
            s.queued.removeIf(q -> {
                if (q.offset() >= target) {
                    s.unsettled.remove(q.offset());
                    s.queuedBytes -= bytes(q);
                    return true;
                }
                return false;
            });
            s.blockedAt = target;
            s.seekPending = true;
            s.resumeAtMillis = resumeAtMillis;
        }
    }

    /** Poll thread: pauses and seeks every partition with a block not applied yet. */
    private void applyBlocks() {
        for (PartitionState s : states.values()) {
            synchronized (s) {
                if (s.seekPending && !s.revoked) {
                    try {
                        consumer.pause(List.of(s.tp));
                        consumer.seek(s.tp, s.blockedAt);
                    } catch (IllegalStateException notAssigned) {
                        // revoked meanwhile: the next owner starts from the committed offset
                    }
                    s.seekPending = false;
                }
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

    private void pollLoop() {
        try {
            // the work topic and its configured retry topics, by name: a pattern subscription matched nothing until
            // the consumer's next metadata refresh (up to 5 min) when the topics had just been created (CI saw it)
            List<String> topics = new ArrayList<>();
            topics.add(topic);
            settings.retryBuckets().forEach(b -> topics.add(KafkaTopics.retryTopic(topic, b)));
            long nextCommit = System.currentTimeMillis() + settings.commitInterval().toMillis();
            long nextLeaseCheck = System.currentTimeMillis() + 1000;
            boolean subscribed = false;
            while (!closing) {
                try {
                    if (!subscribed) {
                        consumer.subscribe(topics, new Rebalance());
                        subscribed = true;
                    }
                    applyBlocks();
                    resumeWhatIsDue();
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(anyBackpressured()
                            ? POLL_WHILE_BACKPRESSURED : POLL);
                    for (TopicPartition tp : records.partitions()) {
                        PartitionState s = states.get(tp);
                        if (s != null) {
                            accept(s, records.records(tp));
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
                } catch (WakeupException | InterruptException e) {
                    if (!closing) {
                        LOG.warn("topic={} consumer woken up while not closing; polling on", topic);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("topic={} poll failed ({}); trying again in 1 s", topic, e.toString());
                    sleepQuietly(1000);
                }
            }
        } catch (RuntimeException | Error e) {
            LOG.error("topic={} the subscription stopped: {}", topic, e.toString(), e);
        } finally {
            shutDown();
            stopped.countDown();
        }
    }

    private boolean anyBackpressured() {
        for (PartitionState s : states.values()) {
            if (s.backpressured) {
                return true;
            }
        }
        return false;
    }

    private void resumeWhatIsDue() {
        long now = System.currentTimeMillis();
        List<TopicPartition> resume = new ArrayList<>();
        for (PartitionState s : states.values()) {
            synchronized (s) {
                if (s.blockedAt >= 0 && !s.seekPending && s.resumeAtMillis <= now) {
                    s.blockedAt = -1;
                    if (!s.backpressured) {
                        resume.add(s.tp);
                    }
                } else if (s.backpressured && s.queued.size() <= settings.maxQueuedPerPartition() / 2
                        && s.queuedBytes <= MAX_QUEUED_BYTES / 2) {
                    s.backpressured = false;
                    if (s.blockedAt < 0) {
                        resume.add(s.tp);
                    }
                }
            }
        }
        if (!resume.isEmpty()) {
            resume.removeIf(tp -> !consumer.assignment().contains(tp));
            consumer.resume(resume);
        }
    }

    private void accept(PartitionState s, List<ConsumerRecord<byte[], byte[]>> records) {
        boolean pause = false;
        synchronized (s) {
            for (ConsumerRecord<byte[], byte[]> r : records) {
                if ((s.blockedAt >= 0 && r.offset() >= s.blockedAt) || r.offset() < s.fetchedUpTo) {
                    continue;
                }
                s.unsettled.add(r.offset());
                s.queued.add(r);
                s.queuedBytes += bytes(r);
                s.fetchedUpTo = r.offset() + 1;
            }
            if (!s.scheduled && !s.queued.isEmpty()) {
                s.scheduled = true;
                workers.execute(() -> drain(s));
            }
            if (!s.backpressured && (s.queued.size() >= settings.maxQueuedPerPartition()
                    || s.queuedBytes >= MAX_QUEUED_BYTES)) {
                s.backpressured = true;
                pause = true;
            }
        }
        if (pause) {
            consumer.pause(List.of(s.tp));
        }
    }

    /** Hands the partition's queued records to the handler in order, a turn of at most {@value #DRAIN_TURN}. */
    private void drain(PartitionState s) {
        for (int handed = 0;; handed++) {
            ConsumerRecord<byte[], byte[]> r;
            synchronized (s) {
                if (s.revoked || closing) {
                    s.queued.clear(); // stay unsettled: the commit stops before them and they are fetched again
                    s.queuedBytes = 0;
                    s.scheduled = false;
                    return;
                }
                if (handed >= DRAIN_TURN && !s.queued.isEmpty()) {
                    workers.execute(() -> drain(s)); // other partitions get a turn
                    return;
                }
                r = s.queued.poll();
                if (r == null) {
                    s.scheduled = false;
                    return;
                }
                s.queuedBytes -= bytes(r);
                if (s.retryTopic && !ours(r)) {
                    s.unsettled.remove(r.offset()); // another group's retry copy of the same work topic: theirs
                    continue;
                }
                if (s.retryTopic) {
                    long due = dueAt(r, settings);
                    if (due > System.currentTimeMillis()) {
                        s.queued.addFirst(r);
                        s.queuedBytes += bytes(r);
                        s.scheduled = false;
                        block(s, r.offset(), due);
                        return;
                    }
                }
                s.dispatchedUpTo = r.offset() + 1;
            }
            dispatch(s, r);
        }
    }

    /** A retry copy this topic's group wrote (or one without the stamp, from before it existed). */
    private boolean ours(ConsumerRecord<byte[], byte[]> r) {
        String group = KafkaWire.last(r.headers(), KafkaWire.GROUP);
        return group == null || group.equals(settings.group(topic));
    }

    /**
     * When a retry copy is due: its due-time header, but never later than its write time (the broker's, on retry
     * topics idemkit creates) plus its bucket, so a wrong clock or a forged header cannot hold a bucket back.
     */
    private static long bytes(ConsumerRecord<byte[], byte[]> r) {
        return Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize());
    }

    static long dueAt(ConsumerRecord<byte[], byte[]> r, KafkaSettings settings) {
        long latest = r.timestamp() + bucketMillis(r.topic(), settings);
        try {
            return Math.min(Long.parseLong(KafkaWire.last(r.headers(), KafkaWire.DUE_AT)), latest);
        } catch (RuntimeException unreadable) {
            return 0; // a retry record without a readable due time is due now
        }
    }

    private static long bucketMillis(String retryTopic, KafkaSettings settings) {
        int at = retryTopic.lastIndexOf(".retry.");
        try {
            String n = retryTopic.substring(at + ".retry.".length(), retryTopic.length() - 1);
            return Long.parseLong(n) * 1000;
        } catch (RuntimeException notOurs) {
            return settings.retryBuckets().get(settings.retryBuckets().size() - 1).toMillis();
        }
    }

    private void dispatch(PartitionState s, ConsumerRecord<byte[], byte[]> r) {
        KafkaDelivery delivery = new KafkaDelivery(this, s, r, s.retryTopic);
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

    private void commit(boolean sync, Collection<PartitionState> which) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        Map<TopicPartition, PartitionState> byTp = new HashMap<>();
        for (PartitionState s : which) {
            long point = s.commitPoint();
            if (point > s.lastCommitted) {
                offsets.put(s.tp, new OffsetAndMetadata(point));
                byTp.put(s.tp, s);
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        if (sync) {
            try {
                consumer.commitSync(offsets, settings.sendTimeout());
                offsets.forEach((tp, o) -> byTp.get(tp).lastCommitted = o.offset());
            } catch (WakeupException e) {
                throw e; // the caller commits again: the wakeup is spent
            } catch (RuntimeException e) {
                LOG.warn("topic={} committing {} failed ({}): those records will be delivered again", topic,
                        offsets.keySet(), e.toString());
            }
        } else {
            consumer.commitAsync(offsets, (done, error) -> {
                if (error == null) {
                    done.forEach((tp, o) -> {
                        PartitionState s = byTp.get(tp);
                        s.lastCommitted = Math.max(s.lastCommitted, o.offset());
                    });
                } else {
                    LOG.debug("topic={} async commit failed ({}); the next one covers it", topic, error.toString());
                }
            });
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                states.compute(tp, (k, old) -> old != null && !old.revoked ? old
                        : new PartitionState(k, !k.topic().equals(topic)));
            }
            LOG.info("topic={} assigned {}", topic, partitions);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            List<PartitionState> leaving = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                PartitionState s = states.get(tp);
                if (s != null) {
                    s.revoked = true;
                    leaving.add(s);
                }
            }
            awaitSettled(leaving, settings.closeGrace());
            commit(true, leaving);
            leaving.forEach(s -> states.remove(s.tp, s));
            LOG.info("topic={} revoked {}", topic, partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                PartitionState s = states.remove(tp);
                if (s != null) {
                    s.revoked = true;
                }
            }
            LOG.warn("topic={} lost {} (another consumer owns them now; what was in flight comes again there)",
                    topic, partitions);
        }
    }

    /** Waits until every record handed to the handler is settled, or {@code grace} has passed. */
    private static void awaitSettled(Collection<PartitionState> which, Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        while (System.nanoTime() < deadline && !which.stream().allMatch(PartitionState::dispatchedAllSettled)) {
            sleepQuietly(10);
        }
    }

    private void shutDown() {
        closing = true;
        awaitSettled(states.values(), settings.closeGrace());
        try {
            commit(true, states.values());
        } catch (WakeupException e) {
            commit(true, states.values()); // close() woke the consumer outside poll: the wakeup is spent now
        } catch (RuntimeException e) {
            LOG.warn("topic={} final commit failed: {}", topic, e.toString());
        }
        try {
            consumer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            LOG.warn("topic={} closing the consumer failed: {}", topic, e.toString());
        }
        workers.shutdown();
        try {
            if (!workers.awaitTermination(settings.closeGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                workers.shutdownNow();
            }
        } catch (InterruptedException e) {
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
        onClosed.run();
    }

    @Override
    public void close() {
        closing = true;
        consumer.wakeup();
        try {
            if (!stopped.await(settings.closeGrace().toMillis() * 2 + 30_000, TimeUnit.MILLISECONDS)) {
                LOG.warn("topic={} the subscription did not stop in time", topic);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
