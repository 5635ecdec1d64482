package dev.idemkit.adapters.kafka;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer of a work topic in its share group (KIP-932: any number of consumers per partition, records acquired
 * one by one, no order), with the topic's retry topics consumed by a {@link KafkaSubscription} in the topic's consumer
 * group: a retry copy waits there until it is due, as in group consumption.
 *
 * <p>One thread polls and owns the {@code KafkaShareConsumer} (explicit acknowledgement). The records of a poll go to
 * {@code concurrency} workers; the poll thread acknowledges each one once it is settled: {@code ACCEPT} once it was
 * acked (the inbox's commit is behind it) or its retry copy was acked by the broker, {@code REJECT} once its dead letter
 * was, {@code RELEASE} when it was given back (a copy that could not be written, a handler that threw without settling,
 * a settle that did not come within {@code settleTimeout} or the record's acquisition lock). The next poll, which
 * sends those acknowledgements, comes only when every record of the last one is acknowledged (explicit mode asks for
 * that). A crash before an acknowledgement reached the broker lets the record's lock run out and the broker delivers it
 * again: the inbox absorbs it.
 *
 * <p>The safety net is the broker's delivery-count limit: a record delivered that many times is archived by the broker.
 * So a record that arrives on its last delivery (its earlier ones all ended without a settle: a consumer that died
 * holding it, a lock that ran out, copies that could not be written) is dead-lettered, with that reason, without being
 * handed to the handler; it is then in the dead-letter topic for {@code idemkit dlq}, never archived unseen.
 */
final class KafkaShareSubscription implements Subscription, KafkaDelivery.Source {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaShareSubscription.class);
    private static final Duration POLL = Duration.ofMillis(100);
    /** How often the group's delivery-count limit is read again. */
    private static final Duration LIMIT_READ_EVERY = Duration.ofSeconds(30);
    /** Consumer settings a share consumer refuses (it takes them from the group, or has no use for them). */
    private static final Set<String> NOT_FOR_SHARE_CONSUMERS = Set.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, ConsumerConfig.GROUP_INSTANCE_ID_CONFIG,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
            ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG,
            ConsumerConfig.GROUP_PROTOCOL_CONFIG, ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG,
            ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);

    private final String topic;
    private final KafkaSettings settings;
    private final DeliveryHandler handler;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaShareConsumer<byte[], byte[]> consumer;
    private final KafkaSubscription retries;
    private final java.util.concurrent.atomic.AtomicBoolean retriesClosed = new java.util.concurrent.atomic.AtomicBoolean();
    /** Reads the group's delivery-count limit from the broker (an operator may change it while this runs). */
    private final java.util.function.IntSupplier deliveryLimitSource;
    private volatile int deliveryLimit;
    private long nextLimitRead;
    private final ExecutorService workers;
    private final PollThread pollThread;
    private final Runnable onClosed;
    private volatile boolean closing;
    /** Poll thread only: acknowledgements sent while their poll's records still ran, not yet answered by the broker. */
    private int unanswered;

    KafkaShareSubscription(String topic, KafkaSettings settings, DeliveryHandler handler,
            KafkaProducer<byte[], byte[]> producer, java.util.function.IntSupplier deliveryLimitSource,
            KafkaSubscription retries, Runnable onClosed) {
        this.topic = topic;
        this.settings = settings;
        this.handler = handler;
        this.producer = producer;
        this.deliveryLimitSource = deliveryLimitSource;
        this.deliveryLimit = deliveryLimitSource.getAsInt();
        this.nextLimitRead = System.nanoTime() + LIMIT_READ_EVERY.toNanos();
        this.retries = retries;
        this.onClosed = onClosed;
        this.consumer = new KafkaShareConsumer<>(consumerProperties(settings, settings.shareGroup(topic)),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.pollThread = new PollThread("kafka-share", topic, "share subscription", () -> closing, this::subscribe,
                this::turn, this::shutDown);
        this.workers = pollThread.workers(settings.concurrency());
    }

    static Properties consumerProperties(KafkaSettings settings, String group) {
        Properties p = new Properties();
        settings.clientProperties().forEach((k, v) -> {
            if (!NOT_FOR_SHARE_CONSUMERS.contains(k)) {
                p.put(k, v);
            }
        });
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        // a poll's records wait for a worker while their acquisition locks run: a poll brings at most 16 per worker (64
        // at least; batch_optimized, the default, may bring more than max.poll.records), so that with handlers of a
        // second each the last one starts well within a 30 s lock instead of being released unstarted and counted as
        // delivered. 8 per worker ran KafkaBenchmark's share cases at 7,100 and 2,800/s, 16 at 10,200 and 4,100/s
        p.put(ConsumerConfig.SHARE_ACQUIRE_MODE_CONFIG, "record_limit");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Math.max(64, settings.concurrency() * 16));
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

    @Override
    public void send(ProducerRecord<byte[], byte[]> record) {
        KafkaMessageTransport.sendAndWait(producer, record, settings.sendTimeout());
    }

    void start() {
        retries.start();
        pollThread.start();
    }

    /** Poll thread, once: the acknowledgement callback, then the work topic. */
    private void subscribe() {
        consumer.setAcknowledgementCommitCallback(this::acknowledgementsCommitted);
        consumer.subscribe(List.of(topic));
    }

    /** Poll thread (the share consumer calls back from inside poll or commit): the broker answered acknowledgements. */
    private void acknowledgementsCommitted(Map<TopicIdPartition, Set<Long>> offsets, Exception error) {
        unanswered = Math.max(0, unanswered - offsets.values().stream().mapToInt(Set::size).sum());
        if (error != null) {
            LOG.warn("topic={} the broker refused acknowledgements of {} records ({}): their locks ran out or"
                    + " their member left; they are delivered again", topic,
                    offsets.values().stream().mapToInt(Set::size).sum(), error.toString());
        }
    }

    /** Poll thread, each turn: the delivery-count limit when due, one poll handed out. */
    private void turn() {
        readLimitIfDue();
        ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
        if (!records.isEmpty()) {
            handle(records);
        }
    }

    /** Poll thread: the group's delivery-count limit, read again every {@link #LIMIT_READ_EVERY}. */
    private void readLimitIfDue() {
        if (System.nanoTime() - nextLimitRead < 0) {
            return;
        }
        nextLimitRead = System.nanoTime() + LIMIT_READ_EVERY.toNanos();
        try {
            int now = deliveryLimitSource.getAsInt();
            if (now != deliveryLimit) {
                LOG.info("topic={} share group {} delivery-count limit is now {} (was {})", topic,
                        settings.shareGroup(topic), now, deliveryLimit);
                deliveryLimit = now;
            }
        } catch (RuntimeException e) {
            LOG.warn("topic={} could not read the share group's delivery-count limit ({}); keeping {}", topic,
                    e.toString(), deliveryLimit);
        }
    }

    /**
     * Hands the poll's records out and acknowledges each as it settles; returns when all are acknowledged. Records on
     * their last delivery are dead-lettered first, on this thread: behind the others in the workers' queue they could be
     * released at the deadline unstarted, and a release on the last delivery archives the record.
     */
    private void handle(ConsumerRecords<byte[], byte[]> records) {
        Batch batch = new Batch();
        List<KafkaDelivery> deliveries = new ArrayList<>(records.count());
        List<KafkaDelivery> last = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            KafkaDelivery d = new KafkaDelivery(this, batch, r, false);
            deliveries.add(d);
            if (d.deliveryCount() >= deliveryLimit) {
                last.add(d);
            }
        }
        last.forEach(this::lastDelivery);
        for (KafkaDelivery d : deliveries) {
            if (!last.contains(d)) {
                workers.execute(() -> dispatch(d));
            }
        }
        batch.acknowledgeAll(deliveries);
    }

    private void dispatch(KafkaDelivery delivery) {
        if (delivery.settled()) {
            return; // given back before a worker got to it (its lock ran out, or the subscription is closing)
        }
        ConsumerRecord<byte[], byte[]> r = delivery.record();
        try {
            handler.onDelivery(delivery);
        } catch (RuntimeException | Error e) {
            LOG.error("topic={} partition={} offset={} the handler threw without settling ({}); the record is released"
                    + " to the share group", r.topic(), r.partition(), r.offset(), e.toString(), e);
            if (!delivery.settled()) {
                delivery.abandon();
            }
        }
    }

    /**
     * Poll thread: a record on its last delivery is dead-lettered with the reason, so that the broker does not archive
     * it unseen. A dead letter that cannot be written is tried again, with a growing pause, while the record's lock
     * lasts (less 2 s); only then is it released, and the broker archives it (an ERROR names it).
     */
    private void lastDelivery(KafkaDelivery delivery) {
        ConsumerRecord<byte[], byte[]> r = delivery.record();
        String why = "delivered " + delivery.deliveryCount() + " times by share group " + settings.shareGroup(topic)
                + " (its delivery-count limit is " + deliveryLimit + ") without a settle: a consumer died or its"
                + " acquisition lock ran out holding it each time";
        AttemptRecord failed = new AttemptRecord(delivery.attempt(), Instant.now(), "delivery "
                + delivery.deliveryCount() + " of " + deliveryLimit + " was its last");
        long lock = consumer.acquisitionLockTimeoutMs().map(Integer::longValue).orElse(30_000L);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, lock - 2_000));
        long pause = 100;
        while (true) {
            try {
                delivery.deadLetterOrStayOpen(why, failed);
                return;
            } catch (RuntimeException e) {
                if (closing || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause) - deadline >= 0) {
                    LOG.error("topic={} partition={} offset={} message_id={} is on its last delivery and its dead letter"
                            + " could not be written ({}): released, the broker archives it; it stays in the topic while"
                            + " its retention lasts", r.topic(), r.partition(), r.offset(),
                            KafkaWire.printable(delivery.message().rawId()), e.toString());
                    delivery.abandon();
                    return;
                }
                LOG.warn("topic={} partition={} offset={} the dead letter of a record on its last delivery could not be"
                        + " written ({}); trying again in {} ms", r.topic(), r.partition(), r.offset(), e.toString(),
                        pause);
                PollThread.sleepQuietly(pause);
                pause = Math.min(2_000, pause * 2);
            }
        }
    }

    /**
     * The deliveries of one poll and their outcomes, which arrive from the workers and are acknowledged by the poll
     * thread (the share consumer is single-threaded).
     */
    private final class Batch implements KafkaDelivery.Settle {
        private final BlockingQueue<Map.Entry<KafkaDelivery, AcknowledgeType>> outcomes = new LinkedBlockingQueue<>();

        @Override
        public void settled(KafkaDelivery delivery, KafkaDelivery.Outcome outcome) {
            outcomes.add(Map.entry(delivery, outcome == KafkaDelivery.Outcome.DEAD_LETTERED ? AcknowledgeType.REJECT
                    : AcknowledgeType.ACCEPT));
        }

        @Override
        public void giveBack(KafkaDelivery delivery, Duration pause) {
            outcomes.add(Map.entry(delivery, AcknowledgeType.RELEASE));
        }

        /**
         * Poll thread: acknowledges each delivery as its outcome arrives. One still open at the deadline (the settle
         * timeout, or the record's acquisition lock, whichever is first) is given back; one whose copy is still being
         * written then gets the send timeout more, and is released after that (the copy, if it lands, is a duplicate
         * the inbox absorbs).
         */
        void acknowledgeAll(List<KafkaDelivery> deliveries) {
            Map<KafkaDelivery, Boolean> open = new IdentityHashMap<>();
            deliveries.forEach(d -> open.put(d, Boolean.TRUE));
            long start = System.nanoTime();
            long lock = consumer.acquisitionLockTimeoutMs().map(Integer::longValue).orElse(Long.MAX_VALUE);
            long giveBackAfter = TimeUnit.MILLISECONDS.toNanos(Math.min(settings.settleTimeout().toMillis(), lock));
            long forceAfter = giveBackAfter + settings.sendTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5);
            boolean gaveBack = false;
            boolean interrupted = false;
            int unsent = 0;
            while (!open.isEmpty()) {
                Map.Entry<KafkaDelivery, AcknowledgeType> next;
                try {
                    next = outcomes.poll(10, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // kept for after the batch: every record still gets its acknowledgement
                    next = null;
                }
                if (next != null) {
                    if (open.remove(next.getKey()) != null) {
                        acknowledge(next.getKey(), next.getValue());
                        unsent++;
                    }
                    continue;
                }
                if (unsent > 0) {
                    // records of this poll still running: send what is settled now rather than with the next poll, so
                    // that one record held for long (or by a consumer about to die) does not hold its batch-mates'
                    // acknowledgements back; they would be delivered again, and at the limit dead-lettered with it
                    commitAcknowledged();
                    unanswered += unsent;
                    unsent = 0;
                } else if (unanswered > 0) {
                    // nothing new to send, but answers to what was sent are due: the consumer hands them to the
                    // callback only from inside one of its calls, so take them now rather than at the next poll
                    commitAcknowledged();
                }
                long elapsed = System.nanoTime() - start;
                if (!gaveBack && (elapsed >= giveBackAfter || closing && elapsed >= settings.closeGrace().toNanos())) {
                    gaveBack = true;
                    forceAfter = Math.min(forceAfter, elapsed + settings.sendTimeout().toNanos()
                            + TimeUnit.SECONDS.toNanos(5));
                    for (KafkaDelivery d : List.copyOf(open.keySet())) {
                        if (d.abandon()) {
                            LOG.error("topic={} partition={} offset={} not settled within its settle timeout or"
                                    + " acquisition lock (or the close grace): released (the inbox absorbs it if the"
                                    + " first delivery still completes)", topic, d.record().partition(),
                                    d.record().offset());
                        }
                    }
                } else if (elapsed >= forceAfter) {
                    for (KafkaDelivery d : List.copyOf(open.keySet())) {
                        LOG.error("topic={} partition={} offset={} its settle did not end in time: released", topic,
                                d.record().partition(), d.record().offset());
                        open.remove(d);
                        acknowledge(d, AcknowledgeType.RELEASE);
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        private void commitAcknowledged() {
            try {
                consumer.commitAsync();
            } catch (RuntimeException e) {
                LOG.debug("topic={} sending acknowledgements failed ({}); the next poll sends them", topic,
                        e.toString());
            }
        }

        private void acknowledge(KafkaDelivery d, AcknowledgeType type) {
            try {
                consumer.acknowledge(d.record(), type);
            } catch (IllegalStateException | org.apache.kafka.common.errors.InvalidRecordStateException e) {
                // the record's lock ran out, or the member's session ended: the broker delivers it again
                LOG.warn("topic={} partition={} offset={} could not be acknowledged {} ({}): the broker delivers it"
                        + " again", topic, d.record().partition(), d.record().offset(), type, e.toString());
            }
        }
    }

    private void shutDown() {
        closing = true;
        try {
            try {
                consumer.commitSync(Duration.ofSeconds(5));
            } catch (WakeupException e) {
                consumer.commitSync(Duration.ofSeconds(5)); // close() woke the consumer outside poll: spent now
            }
        } catch (RuntimeException e) {
            LOG.warn("topic={} committing the share group's acknowledgements failed ({}): those records' locks run out"
                    + " and they are delivered again", topic, e.toString());
        }
        try {
            consumer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            LOG.warn("topic={} closing the share consumer failed: {}", topic, e.toString());
        }
        PollThread.stopWorkers(workers, settings.closeGrace());
        closeRetries(); // also when the poll thread ended on an error: nothing else would close them
        onClosed.run();
    }

    private void closeRetries() {
        if (retriesClosed.compareAndSet(false, true)) {
            retries.close();
        }
    }

    @Override
    public void close() {
        closing = true;
        consumer.wakeup();
        // the poll thread's longest way out: a batch's close grace, a copy's send timeout and 5 s, the commit (twice
        // after a wakeup) and the consumer's close, 5 s each, the workers' close grace, and the retries' own close
        pollThread.awaitStopped(settings.closeGrace().multipliedBy(4).plus(settings.sendTimeout()).plusSeconds(60));
        closeRetries();
    }
}
