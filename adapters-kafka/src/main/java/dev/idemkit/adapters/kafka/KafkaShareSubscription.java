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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InterruptException;
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
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration POLL = Duration.ofMillis(100);
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
    private final int deliveryLimit;
    private final ExecutorService workers;
    private final Thread pollThread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Runnable onClosed;
    private volatile boolean closing;

    KafkaShareSubscription(String topic, KafkaSettings settings, DeliveryHandler handler,
            KafkaProducer<byte[], byte[]> producer, int deliveryLimit, KafkaSubscription retries, Runnable onClosed) {
        this.topic = topic;
        this.settings = settings;
        this.handler = handler;
        this.producer = producer;
        this.deliveryLimit = deliveryLimit;
        this.retries = retries;
        this.onClosed = onClosed;
        this.consumer = new KafkaShareConsumer<>(consumerProperties(settings, settings.shareGroup(topic)),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        int n = SEQ.incrementAndGet();
        AtomicInteger worker = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(settings.concurrency(), r -> {
            Thread t = new Thread(r, "idemkit-kafka-share-" + n + "-worker-" + worker.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.pollThread = new Thread(this::pollLoop, "idemkit-kafka-share-" + n + "-poll-" + topic);
        this.pollThread.setDaemon(true);
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

    @Override
    public void send(ProducerRecord<byte[], byte[]> record) {
        KafkaMessageTransport.sendAndWait(producer, record, settings.sendTimeout());
    }

    void start() {
        retries.start();
        pollThread.start();
    }

    private void pollLoop() {
        try {
            consumer.subscribe(List.of(topic));
            while (!closing) {
                try {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                    if (!records.isEmpty()) {
                        handle(records);
                    }
                } catch (WakeupException | InterruptException e) {
                    if (!closing) {
                        LOG.warn("topic={} share consumer woken up while not closing; polling on", topic);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("topic={} share poll failed ({}); trying again in 1 s", topic, e.toString());
                    sleepQuietly(1000);
                }
            }
        } catch (RuntimeException | Error e) {
            LOG.error("topic={} the share subscription stopped: {}", topic, e.toString(), e);
        } finally {
            shutDown();
            stopped.countDown();
        }
    }

    /** Hands the poll's records out and acknowledges each as it settles; returns when all are acknowledged. */
    private void handle(ConsumerRecords<byte[], byte[]> records) {
        Batch batch = new Batch();
        List<KafkaDelivery> deliveries = new ArrayList<>(records.count());
        for (ConsumerRecord<byte[], byte[]> r : records) {
            KafkaDelivery d = new KafkaDelivery(this, batch, r, false);
            deliveries.add(d);
            if (d.deliveryCount() >= deliveryLimit) {
                workers.execute(() -> lastDelivery(d));
            } else {
                workers.execute(() -> dispatch(d));
            }
        }
        batch.acknowledgeAll(deliveries);
    }

    private void dispatch(KafkaDelivery delivery) {
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

    /** A record on its last delivery: dead-lettered with the reason, so that the broker does not archive it unseen. */
    private void lastDelivery(KafkaDelivery delivery) {
        ConsumerRecord<byte[], byte[]> r = delivery.record();
        String why = "delivered " + delivery.deliveryCount() + " times by share group " + settings.shareGroup(topic)
                + " (its delivery-count limit is " + deliveryLimit + ") without a settle: a consumer died or its"
                + " acquisition lock ran out holding it each time";
        try {
            delivery.deadLetter(why, new AttemptRecord(delivery.attempt(), Instant.now(), "delivery "
                    + delivery.deliveryCount() + " of " + deliveryLimit + " was its last"));
        } catch (RuntimeException e) {
            LOG.error("topic={} partition={} offset={} message_id={} is on its last delivery and its dead letter could"
                    + " not be written ({}): released, the broker archives it; it stays in the topic while its retention"
                    + " lasts", r.topic(), r.partition(), r.offset(),
                    KafkaWire.printable(delivery.message().rawId()), e.toString());
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
                    unsent = 0;
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
                LOG.warn("topic={} the share subscription did not stop in time", topic);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        retries.close();
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
