package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryMessageTransport;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.forwarding.ForwardingDelivery;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The batched consumer loop on the in-memory reference transport and inbox. */
class BatchingConsumerTest {
    private static final RetryPolicy FAST = new RetryPolicy(3,
            Backoff.exponential(Duration.ofMillis(5), Duration.ofMillis(20), Jitter.FULL), FailureClassifier.defaults());

    private final InMemoryMessageTransport transport = new InMemoryMessageTransport();
    private final InMemoryCounter counter = new InMemoryCounter();
    private final String queue = "q-" + UUID.randomUUID();
    private final List<String> acked = new CopyOnWriteArrayList<>();
    private final Set<String> committed = ConcurrentHashMap.newKeySet();
    private final List<String> ackedBeforeCommit = new CopyOnWriteArrayList<>();

    private final InMemoryInboxStore inbox = new InMemoryInboxStore();

    @AfterEach
    void closeTransport() {
        transport.close();
    }

    private BatchingConsumer<InMemoryUnitOfWork> consumer(String name, BatchingConsumer.BatchSettings batch,
            AtomicInteger effects) {
        return new BatchingConsumer<>(ConsumerSettings.defaults(name).withRetryPolicy(FAST), new RecordingInbox(),
                (message, work) -> {
                    if (message.rawId().startsWith("poison")) {
                        throw new IllegalStateException("cannot apply " + message.rawId());
                    }
                    effects.incrementAndGet();
                    counter.add(work, name, Long.parseLong(new String(message.body(), StandardCharsets.UTF_8)));
                }, batch, () -> 0.5, Clock.system(), ConsumerEvents.none());
    }

    /** Acks are recorded, and whether the key had committed before. */
    private DeliveryHandler watching(DeliveryHandler inner) {
        return d -> inner.onDelivery(new Watched(d, null));
    }

    /** Records its ack (and whether its key had committed); acks in bulk through {@code bulk} when there is one. */
    private final class Watched extends ForwardingDelivery {
        private final Delivery.BulkAck bulk;

        Watched(Delivery d, Delivery.BulkAck bulk) {
            super(d);
            this.bulk = bulk;
        }

        @Override
        public void ack() {
            String id = message().rawId();
            if (!committed.contains(id)) {
                ackedBeforeCommit.add(id);
            }
            acked.add(id);
            super.ack();
        }

        @Override
        public Optional<Delivery.BulkAck> bulkAck() {
            return Optional.ofNullable(bulk);
        }
    }

    @Test
    void manyDeliveriesWithDuplicatesRunEachEffectOnceInFewBatchesAndAreAckedOnlyAfterTheirCommit() throws Exception {
        AtomicInteger effects = new AtomicInteger();
        BatchingConsumer<InMemoryUnitOfWork> batching = consumer("billing", BatchingConsumer.BatchSettings.defaults()
                .withMaxBatch(20).withLinger(Duration.ofMillis(5)), effects);
        long expected = 0;
        for (int i = 0; i < 200; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            expected += i;
        }
        for (int i = 0; i < 100; i++) { // redeliveries of the first hundred
            transport.publish(queue, OutgoingMessage.of("m-" + i, Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
        }
        try (Subscription s = transport.subscribe(queue, watching(batching))) {
            Eventually.await(Duration.ofSeconds(20), "300 acks", () -> acked.size() == 300);
        }
        batching.close();

        assertThat(effects).hasValue(200);
        assertThat(counter.read("billing")).isEqualTo(expected);
        assertThat(ackedBeforeCommit).as("acked before their key committed").isEmpty();
        assertThat(batching.batches()).as("batches").isPositive().isLessThan(300);
        assertThat(batching.viaSingle()).isZero();
        assertThat(transport.depth(queue)).isZero();
    }

    /**
     * A transport that acks many at once (RabbitMQ's multiple ack): a batch is acked in one bulk call per group, after
     * its commit, every delivery exactly once; a reused id is not in it (the single-message path dead-letters it).
     */
    @Test
    void aBatchIsAckedInOneBulkCallAfterItsCommitAndAReusedIdIsLeftOut() throws Exception {
        AtomicInteger effects = new AtomicInteger();
        List<Integer> bulkCalls = new CopyOnWriteArrayList<>();
        Delivery.BulkAck bulk = deliveries -> {
            bulkCalls.add(deliveries.size());
            deliveries.forEach(Delivery::ack);
        };
        BatchingConsumer<InMemoryUnitOfWork> batching = consumer("bulk", BatchingConsumer.BatchSettings.defaults()
                .withMaxBatch(50).withLinger(Duration.ofMillis(50)).withWorkers(1), effects);
        for (int i = 0; i < 100; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, "1".getBytes(StandardCharsets.UTF_8)));
        }
        transport.publish(queue, OutgoingMessage.of("m-7", "2".getBytes(StandardCharsets.UTF_8))); // id reused
        try (Subscription s = transport.subscribe(queue, d -> batching.onDelivery(new Watched(d, bulk)))) {
            Eventually.await(Duration.ofSeconds(20), "100 acks and a dead letter",
                    () -> acked.size() == 100 && transport.depth(queue) == 1);
        }
        batching.close();

        assertThat(bulkCalls.stream().mapToInt(Integer::intValue).sum()).as("acked in bulk").isEqualTo(100);
        assertThat((long) bulkCalls.size()).as("bulk calls").isLessThanOrEqualTo(batching.batches()).isLessThan(50);
        assertThat(acked).as("each once").doesNotHaveDuplicates();
        assertThat(ackedBeforeCommit).isEmpty();
        assertThat(transport.peek(queue, 10).get(0).deadLetter().original().rawId()).isEqualTo("m-7");
        assertThat(counter.read("bulk")).isEqualTo(100);
    }

    @Test
    void aBatchThatFailsGoesDeliveryByDeliveryAndOnlyThePoisonIsDeadLettered() {
        AtomicInteger effects = new AtomicInteger();
        BatchingConsumer<InMemoryUnitOfWork> batching = consumer("shipping", BatchingConsumer.BatchSettings.defaults()
                .withMaxBatch(10).withLinger(Duration.ofMillis(20)), effects);
        for (int i = 0; i < 9; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, "1".getBytes(StandardCharsets.UTF_8)));
        }
        transport.publish(queue, OutgoingMessage.of("poison-1", "1".getBytes(StandardCharsets.UTF_8)));
        try (Subscription s = transport.subscribe(queue, watching(batching))) {
            Eventually.await(Duration.ofSeconds(20), "nine acks and one dead letter",
                    () -> acked.size() == 9 && transport.depth(queue) == 1);
        }
        batching.close();

        // the handler also ran inside the batches that rolled back: what counts is what committed
        assertThat(counter.read("shipping")).as("committed effects").isEqualTo(9);
        assertThat(effects.get()).as("handler calls, committed or rolled back").isGreaterThanOrEqualTo(9);
        assertThat(batching.viaSingle()).as("the failed batch, delivery by delivery").isGreaterThanOrEqualTo(1);
        List<DeadLetterEntry> dead = transport.peek(queue, 10);
        assertThat(dead).hasSize(1);
        assertThat(dead.get(0).deadLetter().original().rawId()).isEqualTo("poison-1");
        assertThat(dead.get(0).deadLetter().reason()).contains("cannot apply poison-1");
        assertThat(ackedBeforeCommit).isEmpty();
    }

    @Test
    void anIdReusedWithAnotherBodyInsideABatchIsDeadLetteredWithTheReason() {
        AtomicInteger effects = new AtomicInteger();
        BatchingConsumer<InMemoryUnitOfWork> batching = consumer("audit", BatchingConsumer.BatchSettings.defaults()
                .withMaxBatch(10).withLinger(Duration.ofMillis(50)), effects);
        transport.publish(queue, OutgoingMessage.of("m-1", "5".getBytes(StandardCharsets.UTF_8)));
        transport.publish(queue, OutgoingMessage.of("m-1", "6".getBytes(StandardCharsets.UTF_8)));
        try (Subscription s = transport.subscribe(queue, watching(batching))) {
            Eventually.await(Duration.ofSeconds(20), "one ack and one dead letter",
                    () -> acked.size() == 1 && transport.depth(queue) == 1);
        }
        batching.close();

        // two workers: either body may reach the inbox first; it is applied, the other is the dead letter
        long applied = counter.read("audit");
        assertThat(applied).isIn(5L, 6L);
        DeadLetterEntry dead = transport.peek(queue, 10).get(0);
        assertThat(dead.deadLetter().reason()).contains("reused");
        assertThat(new String(dead.deadLetter().original().body(), StandardCharsets.UTF_8))
                .isEqualTo(applied == 5 ? "6" : "5");
    }

    @Test
    void metricsThatThrowNeitherStopTheWorkersNorLeaveADeliveryUnsettled() {
        AtomicInteger effects = new AtomicInteger();
        BatchingConsumer<InMemoryUnitOfWork> batching = new BatchingConsumer<>(
                ConsumerSettings.defaults("metrics").withRetryPolicy(FAST), new RecordingInbox(), (message, work) -> {
                    effects.incrementAndGet();
                    counter.add(work, "metrics", 1);
                }, BatchingConsumer.BatchSettings.defaults().withMaxBatch(5).withWorkers(1), () -> 0.5, Clock.system(),
                (consumer, decision, latency) -> {
                    throw new IllegalStateException("metrics registry broken");
                });
        for (int i = 0; i < 50; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, "1".getBytes(StandardCharsets.UTF_8)));
        }
        try (Subscription s = transport.subscribe(queue, watching(batching))) {
            Eventually.await(Duration.ofSeconds(20), "50 acks", () -> acked.size() == 50);
        }
        batching.close();

        assertThat(effects).hasValue(50);
        assertThat(batching.batches()).as("one worker kept running batches").isGreaterThan(1);
    }

    @Test
    void aBatchThatFailsOnceForAPassingReasonIsRunAgainWholeNotDeliveryByDelivery() {
        AtomicInteger effects = new AtomicInteger();
        AtomicInteger failuresLeft = new AtomicInteger(1);
        InboxStore<InMemoryUnitOfWork> deadlockingOnce = new RecordingInbox() {
            @Override
            public List<Outcome> runBatch(List<InboxDelivery> deliveries,
                    BatchEffect<? super InMemoryUnitOfWork> effect) {
                if (failuresLeft.getAndDecrement() > 0) {
                    throw new IllegalStateException("deadlock detected (simulated)");
                }
                return super.runBatch(deliveries, effect);
            }
        };
        BatchingConsumer<InMemoryUnitOfWork> batching = new BatchingConsumer<>(
                ConsumerSettings.defaults("retry-whole").withRetryPolicy(FAST), deadlockingOnce, (message, work) -> {
                    effects.incrementAndGet();
                    counter.add(work, "retry-whole", 1);
                }, BatchingConsumer.BatchSettings.defaults().withMaxBatch(10).withWorkers(1)
                        .withLinger(Duration.ofMillis(50)), () -> 0.5, Clock.system(), ConsumerEvents.none());
        for (int i = 0; i < 10; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, "1".getBytes(StandardCharsets.UTF_8)));
        }
        try (Subscription s = transport.subscribe(queue, watching(batching))) {
            Eventually.await(Duration.ofSeconds(20), "10 acks", () -> acked.size() == 10);
        }
        batching.close();

        assertThat(effects).hasValue(10);
        assertThat(batching.viaSingle()).as("no delivery needed the single-message path").isZero();
        assertThat(ackedBeforeCommit).isEmpty();
    }

    @Test
    void aBatchOfOneIsTheSingleMessagePath() {
        AtomicInteger effects = new AtomicInteger();
        BatchingConsumer<InMemoryUnitOfWork> single = consumer("one", BatchingConsumer.BatchSettings.defaults()
                .withMaxBatch(1), effects);
        transport.publish(queue, OutgoingMessage.of("m-1", "3".getBytes(StandardCharsets.UTF_8)));
        try (Subscription s = transport.subscribe(queue, watching(single))) {
            Eventually.await(Duration.ofSeconds(20), "one ack", () -> acked.size() == 1);
        }
        single.close();

        assertThat(single.batches()).isZero();
        assertThat(single.viaSingle()).isEqualTo(1);
        assertThat(counter.read("one")).isEqualTo(3);
    }

    /** The reference inbox that notes the keys it committed, so that an ack can be checked against them. */
    private class RecordingInbox implements InboxStore<InMemoryUnitOfWork> {
        @Override
        public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super InMemoryUnitOfWork> effect) {
            List<Outcome> outcomes = inbox.runBatch(deliveries, effect);
            deliveries.forEach(d -> committed.add(d.key().messageId().value()));
            return outcomes;
        }

        @Override
        public boolean batchesAtomically() {
            return inbox.batchesAtomically();
        }

        @Override
        public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super InMemoryUnitOfWork, R> e) {
            Guarded<R> r = inbox.runOnce(key, fingerprint, e);
            committed.add(key.messageId().value());
            return r;
        }

        @Override
        public Optional<Fingerprint> recorded(InboxKey key) {
            return inbox.recorded(key);
        }

        @Override
        public Guarantee guarantee() {
            return inbox.guarantee();
        }
    }
}
