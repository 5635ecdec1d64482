package dev.idemkit.app.crash;

import dev.idemkit.adapters.postgres.JpaUnitOfWork;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresInboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.adapters.redis.RedisSettings;
import dev.idemkit.adapters.redis.RedisStores;
import dev.idemkit.adapters.redis.RedisUnitOfWork;
import dev.idemkit.adapters.sqs.SqsMessageTransport;
import dev.idemkit.adapters.sqs.SqsSettings;
import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AlertPolicy;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.domain.deadletter.RedriveWindow;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.NonRetryableException;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.forwarding.ForwardingDelivery;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.BatchingConsumer;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.DeadLetterService;
import dev.idemkit.ports.service.MessageHandler;
import dev.idemkit.ports.service.ProcessedKeys;
import java.net.URI;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;

/**
 * The consumer the crash harness kills: a separate JVM running the production consumer loop ({@link ConsumerRuntime})
 * on a real store and a real transport, configured by system properties (see {@link CrashHarness}).
 *
 * <p>The effect is deliberately NOT idempotent: one row (PostgreSQL, {@code crash_effects}) or one increment (Redis,
 * a hash field per message) per run, so a second run of one message's effect shows. Messages whose id starts with
 * {@code retry-} fail their first attempt; those listed as poisoned fail for good (non-retryable) until the harness
 * lifts the poison before a redrive; one whose id starts with {@code exit-} makes the whole process exit (status
 * {@value #EXIT_ON_MESSAGE}) inside its effect, before anything commits or settles. Modes: {@code consume}, {@code redrive} (approve and redrive every dead letter,
 * then exit), and {@code broken-ack-first}, a deliberately broken consumer that acknowledges a delivery BEFORE its
 * unit of work commits, which the harness must catch.
 *
 * <p>Prints {@code READY} when subscribed (or when done redriving), {@code STOPPING} when a SIGTERM starts its
 * shutdown, and exits after closing everything.
 */
public final class CrashChild {
    static final String EFFECTS_TABLE = "crash_effects";
    static final String POISON_TABLE = "crash_poison";
    /** The exit status of a child that a message with an {@code exit-} id made exit inside its effect. */
    static final int EXIT_ON_MESSAGE = 86;
    /**
     * Each message's attempt as its delivery said, by message id: in the batched modes the effect runs on a batch
     * worker, not on the delivering thread (a thread-local read 1 there, so a "retry-" message failed every attempt
     * and was dead-lettered when a batched child got its retry copy).
     */
    private static final java.util.Map<String, Integer> ATTEMPT = new java.util.concurrent.ConcurrentHashMap<>();

    private CrashChild() {}

    public static void main(String[] args) throws Exception {
        CrashAgent.install();
        Combination combination = Combination.valueOf(System.getProperty("idemkit.crash.combination"));
        String queue = System.getProperty("idemkit.crash.queue");
        String consumer = System.getProperty("idemkit.crash.consumer");
        String mode = System.getProperty("idemkit.crash.mode", "consume");
        long effectMillis = Long.getLong("idemkit.crash.effectMillis", 0);

        Store store = combination.store == Combination.Store.POSTGRES ? new PostgresChildStore() : new RedisChildStore();
        MessageTransport transport = transport(combination, store);
        DeadLetterQueue dlq = transport instanceof RabbitMessageTransport r ? r.deadLetterQueue()
                : transport instanceof KafkaMessageTransport k ? k.deadLetters()
                : ((SqsMessageTransport) transport).deadLetters();
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("STOPPING");
            System.out.flush();
            stop.countDown();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "crash-child-shutdown"));
        try {
            if (mode.equals("redrive")) {
                redrive(queue, consumer, store, dlq);
                System.out.println("READY");
                System.out.flush();
                return;
            }
            boolean batched = mode.startsWith("batched");
            DeliveryHandler runtime = mode.equals("broken-no-inbox") ? ((PostgresChildStore) store)
                    .withoutInbox(consumer, effectMillis) : batched ? store.batched(consumer, effectMillis)
                    : store.runtime(consumer, effectMillis);
            Subscription subscription = transport.subscribe(queue, handler(runtime, mode.endsWith("broken-ack-first"),
                    combination.share));
            System.out.println("READY");
            System.out.flush();
            stop.await();
            if (runtime instanceof BatchingConsumer<?> b) {
                b.close(); // as serve does: the batches settle first, then the subscription closes
            }
            subscription.close();
        } finally {
            transport.close();
            store.close();
            closed.countDown();
        }
    }

    /** The transport's bulk-ack groups, observed by the probe (one wrapper per group). */
    private static final java.util.Map<dev.idemkit.ports.out.Delivery.BulkAck, dev.idemkit.ports.out.Delivery.BulkAck>
            BULK_GROUPS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The delivery handler around the runtime: it records the attempt, and acknowledges through the probe. */
    private static DeliveryHandler handler(DeliveryHandler runtime, boolean brokenAckFirst, boolean share) {
        java.util.concurrent.atomic.AtomicInteger ackedFirst = new java.util.concurrent.atomic.AtomicInteger();
        // (the runtime is the single-message ConsumerRuntime or, in the batched modes, the BatchingConsumer serve runs)
        return delivery -> {
            if (delivery.message().rawId() != null) {
                ATTEMPT.put(delivery.message().rawId(), delivery.attempt());
            }
            if (brokenAckFirst) {
                delivery.ack(); // BROKEN on purpose: the message is gone before its effect commits
                int acked = ackedFirst.incrementAndGet();
                if (share) {
                    // a share group's acknowledgement goes with the poll thread's next commit and is final only once
                    // the broker answers it (under .ci/run's load 250 ms was once not enough): wait for the answer
                    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
                    while (CrashProbe.shareAcknowledged() < acked && System.nanoTime() < deadline) {
                        pause(5);
                    }
                    if (CrashProbe.shareAcknowledged() < acked) {
                        System.out.println("ACK-FIRST-NOT-CONFIRMED " + acked); // in the child's log: why it may not bite
                    }
                } else {
                    // acks are sent asynchronously (SQS batches its deletes for 5 ms, AMQP writes on the connection's
                    // thread): give this one time to reach the broker, so the kill inside the effect finds it gone
                    pause(250);
                }
                runtime.onDelivery(new ForwardingDelivery(delivery) {
                    @Override
                    public void ack() {
                        // already acknowledged
                    }
                });
                return;
            }
            runtime.onDelivery(new ForwardingDelivery(delivery) {
                @Override
                public void ack() {
                    CrashProbe.reached(CrashPoint.AFTER_COMMIT_BEFORE_ACK);
                    super.ack();
                }

                // a batch is acked as serve acks it (RabbitMQ: one multiple ack per channel where safe); the probe
                // counts each of its deliveries, as for single acks, and a kill lands before any of the batch's acks
                @Override
                public Optional<BulkAck> bulkAck() {
                    return observedBulkAck(BULK_GROUPS, batch -> batch.forEach(
                            d -> CrashProbe.reached(CrashPoint.AFTER_COMMIT_BEFORE_ACK)), batch -> { });
                }
            });
        };
    }

    private static void redrive(String queue, String consumer, Store store, DeadLetterQueue dlq) {
        DeadLetterService service = new DeadLetterService(dlq, alert -> { }, AlertPolicy.defaults(), Clock.system(),
                store.processed(ConsumerName.of(consumer)), new RedriveWindow(Duration.ofDays(7)));
        List<String> ids = dlq.peek(queue, 1000).stream().map(DeadLetterEntry::id).toList();
        if (!ids.isEmpty()) {
            service.redrive(queue, new RedriveRequest(ids, new Approval("crash-harness", "poison lifted", Instant.now())));
        }
    }

    private static MessageTransport transport(Combination c, Store store) {
        if (c.transport == Combination.Transport.RABBIT) {
            return new RabbitMessageTransport(RabbitSettings.fromEnvironment().withConsumers(2).withPrefetch(10)
                    .withMaxAttemptsHint(5), Clock.system(), System.getProperty("idemkit.crash.connection", "crash"));
        }
        if (c.transport == Combination.Transport.KAFKA) {
            // a killed child's partitions go to the next one when its 2 s session expires (the test broker's minimum)
            return new KafkaMessageTransport(KafkaSettings.defaults(System.getProperty("idemkit.crash.kafka"))
                    .withConcurrency(4).withSessionTimeout(Duration.ofSeconds(2)).withCloseGrace(Duration.ofSeconds(5))
                    .withConsumption(c.share ? KafkaSettings.Consumption.SHARE : KafkaSettings.Consumption.GROUP),
                    c.positionsInStore ? ((PostgresChildStore) store).inbox.positions() : null);
        }
        return new SqsMessageTransport(SqsSettings.local(URI.create(System.getProperty("idemkit.crash.sqsEndpoint")))
                .withWaitTimeSeconds(1).withMaxConcurrentHandlers(4).withVisibility(Duration.ofSeconds(3),
                        Duration.ofSeconds(1)).withCloseGrace(Duration.ofSeconds(5)));
    }

    static RetryPolicy retryPolicy() {
        return RetryPolicy.defaults().withMaxAttempts(5)
                .withBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofMillis(500), Jitter.FULL));
    }

    /** What every effect does before and after its write: the probes, the first-attempt failure, the poison. */
    static void behave(Message m, boolean poisoned) {
        if (m.rawId().startsWith("exit-")) {
            // a message that kills its consumer: the process is gone before it can settle or count an attempt
            Runtime.getRuntime().halt(EXIT_ON_MESSAGE);
        }
        if (m.rawId().startsWith("retry-") && ATTEMPT.getOrDefault(m.rawId(), 1) == 1) {
            throw new IllegalStateException("fails on its first attempt");
        }
        if (poisoned) {
            throw new NonRetryableException("poisoned");
        }
    }

    static void pause(long millis) {
        if (millis > 0) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A store the child consumes on, with its non-idempotent effect. */
    private interface Store extends AutoCloseable {
        ConsumerRuntime<?> runtime(String consumer, long effectMillis);

        /** The same consumer, batched as {@code serve} runs it by default. */
        BatchingConsumer<?> batched(String consumer, long effectMillis);

        ProcessedKeys processed(ConsumerName consumer);

        @Override
        void close();
    }

    private static <U extends UnitOfWork> ConsumerRuntime<U> runtime(String consumer, InboxStore<U> inbox,
            MessageHandler<? super U> handler) {
        SplittableRandom random = new SplittableRandom();
        return new ConsumerRuntime<>(ConsumerSettings.defaults(consumer).withRetryPolicy(retryPolicy()), inbox, handler,
                () -> {
                    synchronized (random) {
                        return random.nextDouble();
                    }
                }, Clock.system(), ConsumerEvents.none());
    }

    private static <U extends UnitOfWork> BatchingConsumer<U> batched(String consumer, InboxStore<U> inbox,
            MessageHandler<? super U> handler) {
        SplittableRandom random = new SplittableRandom();
        return new BatchingConsumer<>(ConsumerSettings.defaults(consumer).withRetryPolicy(retryPolicy()), inbox, handler,
                BatchingConsumer.BatchSettings.defaults().withMaxBatch(5).withLinger(Duration.ofMillis(20)), () -> {
                    synchronized (random) {
                        return random.nextDouble();
                    }
                }, Clock.system(), ConsumerEvents.none());
    }

    /** PostgreSQL: the inbox and one {@code crash_effects} row per effect, in one transaction. */
    private static final class PostgresChildStore implements Store {
        private final PostgresDatabase db;
        private final PostgresInboxStore inbox;

        PostgresChildStore() {
            PostgresSettings settings = PostgresSettings.fromEnvironment().withSchema(System.getProperty("idemkit.crash.schema"))
                    .withPoolSize(8);
            this.db = PostgresDatabase.builder(settings).schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
            this.inbox = new PostgresInboxStore(db);
        }

        @Override
        public ConsumerRuntime<?> runtime(String consumer, long effectMillis) {
            return CrashChild.runtime(consumer, inbox, handler(consumer, effectMillis));
        }

        @Override
        public BatchingConsumer<?> batched(String consumer, long effectMillis) {
            return CrashChild.batched(consumer, inbox, handler(consumer, effectMillis));
        }

        /**
         * BROKEN on purpose: the effect in a transaction of its own, no key recorded, every delivery "processed": a
         * redelivery runs the effect again.
         */
        ConsumerRuntime<?> withoutInbox(String consumer, long effectMillis) {
            MessageHandler<JpaUnitOfWork> handler = handler(consumer, effectMillis);
            InboxStore<JpaUnitOfWork> forgetful = new InboxStore<>() {
                @Override
                public <R> dev.idemkit.ports.out.Guarded<R> runOnce(dev.idemkit.domain.inbox.InboxKey key,
                        dev.idemkit.domain.Fingerprint fingerprint,
                        dev.idemkit.ports.out.Effect<? super JpaUnitOfWork, R> effect) {
                    return dev.idemkit.ports.out.Guarded.processed(db.inTransaction(effect));
                }

                @Override
                public java.util.Optional<dev.idemkit.domain.Fingerprint> recorded(dev.idemkit.domain.inbox.InboxKey key) {
                    return java.util.Optional.empty();
                }

                @Override
                public dev.idemkit.ports.out.Guarantee guarantee() {
                    return inbox.guarantee();
                }
            };
            return CrashChild.runtime(consumer, forgetful, handler);
        }

        private MessageHandler<JpaUnitOfWork> handler(String consumer, long effectMillis) {
            return (m, work) -> {
                CrashProbe.reached(CrashPoint.BEFORE_EFFECT);
                behave(m, poisoned(work, m.rawId()));
                try (PreparedStatement ps = work.connection().prepareStatement(
                        "INSERT INTO " + EFFECTS_TABLE + " (consumer, message_id) VALUES (?, ?)")) {
                    ps.setString(1, consumer);
                    ps.setString(2, m.rawId());
                    ps.executeUpdate();
                }
                pause(effectMillis);
                CrashProbe.reached(CrashPoint.INSIDE_EFFECT);
            };
        }

        private static boolean poisoned(JpaUnitOfWork work, String id) throws java.sql.SQLException {
            try (PreparedStatement ps = work.connection().prepareStatement(
                    "SELECT 1 FROM " + POISON_TABLE + " WHERE message_id = ?")) {
                ps.setString(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }

        @Override
        public ProcessedKeys processed(ConsumerName consumer) {
            return ProcessedKeys.of(inbox, consumer);
        }

        @Override
        public void close() {
            db.close();
        }
    }

    /** Redis: the inbox, and a hash field incremented per effect, staged into the inbox's completion script. */
    private static final class RedisChildStore implements Store {
        private final RedisStores redis;
        private final String prefix;

        RedisChildStore() {
            Map<String, String> env = new HashMap<>(System.getenv());
            env.put("IDEMKIT_REDIS_LEASE_MS", "3000");
            this.prefix = System.getProperty("idemkit.crash.redisPrefix");
            this.redis = RedisStores.connect(RedisSettings.fromEnvironment(env).withKeyPrefix(prefix));
        }

        @Override
        public ConsumerRuntime<?> runtime(String consumer, long effectMillis) {
            return CrashChild.runtime(consumer, redis.inbox().stagedOnly(), handler(consumer, effectMillis));
        }

        @Override
        public BatchingConsumer<?> batched(String consumer, long effectMillis) {
            return CrashChild.batched(consumer, redis.inbox().stagedOnly(), handler(consumer, effectMillis));
        }

        private MessageHandler<RedisUnitOfWork> handler(String consumer, long effectMillis) {
            return (m, work) -> {
                CrashProbe.reached(CrashPoint.BEFORE_EFFECT);
                behave(m, redis.get(prefix + ":crash-poison:" + m.rawId()).isPresent());
                work.hincrBy(prefix + ":crash-effects:" + consumer, m.rawId(), 1);
                pause(effectMillis);
                CrashProbe.reached(CrashPoint.INSIDE_EFFECT);
            };
            // what serve runs on Redis: every effect staged, one round trip per delivery
        }

        @Override
        public ProcessedKeys processed(ConsumerName consumer) {
            return ProcessedKeys.of(redis.inbox(), consumer);
        }

        @Override
        public void close() {
            redis.close();
        }
    }
}
