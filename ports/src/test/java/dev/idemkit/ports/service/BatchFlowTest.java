package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryMessageTransport;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link BatchFlow} called directly, as a front door that receives its own batches (a Spring batch listener) calls it. */
class BatchFlowTest {
    private static final RetryPolicy FAST = new RetryPolicy(3,
            Backoff.exponential(Duration.ofMillis(5), Duration.ofMillis(20), Jitter.FULL), FailureClassifier.defaults());

    // no close grace: the deliveries a test leaves unsettled (a retry copy coming back) are given back at once
    private final InMemoryMessageTransport transport = new InMemoryMessageTransport(4, Clock.system(), Duration.ZERO);
    private final InMemoryCounter counter = new InMemoryCounter();
    private final InMemoryInboxStore inbox = new InMemoryInboxStore();

    private final List<Subscription> subscriptions = new ArrayList<>();

    @AfterEach
    void closeTransport() throws Exception {
        for (Subscription s : subscriptions) {
            s.close();
        }
        transport.close();
    }

    /** The deliveries of {@code ids} in that order, held unsettled (the subscription stays open until the end). */
    private List<Delivery> deliveries(String queue, String... ids) throws InterruptedException {
        for (String id : ids) {
            transport.publish(queue, OutgoingMessage.of(id, "1".getBytes(StandardCharsets.UTF_8)));
        }
        List<Delivery> got = new CopyOnWriteArrayList<>();
        subscriptions.add(transport.subscribe(queue, got::add));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (got.size() < ids.length && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(got).as("deliveries").hasSize(ids.length);
        // the transport may hand them over from several threads: the batch is put in publish order here
        List<Delivery> pool = new ArrayList<>(got);
        List<Delivery> ordered = new ArrayList<>();
        for (String id : ids) {
            Delivery d = pool.stream().filter(x -> x.message().rawId().equals(id)).findFirst().orElseThrow();
            pool.remove(d);
            ordered.add(d);
        }
        return ordered;
    }

    private static BatchFlow.Result settle(BatchFlow<InMemoryUnitOfWork> flow, List<Delivery> batch) {
        List<BatchFlow.Item> items = batch.stream().map(flow::item).toList();
        return flow.settle(items, Collections.newSetFromMap(new IdentityHashMap<>()));
    }

    private DeliveryFlow flow(String name) {
        return new DeliveryFlow(ConsumerSettings.defaults(name).withRetryPolicy(FAST), () -> 0.5, Clock.system(),
                ConsumerEvents.none());
    }

    @Test
    void anErrorThrownByTheBatchsEffectFailsTheBatchAndEachDeliveryIsSettledOnItsOwn() throws Exception {
        String queue = "q-error";
        MessageHandler<InMemoryUnitOfWork> each = (m, work) -> {
            if (m.rawId().startsWith("error")) {
                throw new AssertionError("a listener's assertion on " + m.rawId());
            }
            counter.add(work, "errors", 1);
        };
        BatchFlow<InMemoryUnitOfWork> flow = new BatchFlow<>(flow("errors"), inbox, BatchHandler.eachOf(each), each);

        // before: the Error left settle() with every delivery of the batch in hand, none settled
        BatchFlow.Result result = settle(flow, deliveries(queue, "m-1", "error-1", "m-2", "m-3"));

        assertThat(result.single()).as("the failed batch, delivery by delivery").isEqualTo(4);
        assertThat(result.unsettled()).isZero();
        assertThat(counter.read("errors")).as("the three good ones, once").isEqualTo(3);
        assertThat(inbox.recorded(new InboxKey(flow.flow().settings().name(),
                new dev.idemkit.domain.MessageId("error-1")))).as("no key for the failing one").isEmpty();
    }

    @Test
    void theBatchsEffectGetsTheNewMessagesInTheOrderTheyArrivedWhateverOrderTheStoreHandsThemOver() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        BatchHandler<InMemoryUnitOfWork> batch = (fresh, work) -> fresh.forEach(m -> seen.add(m.rawId()));
        BatchFlow<InMemoryUnitOfWork> flow = new BatchFlow<>(flow("order"), new ReversingInbox(), batch,
                (m, work) -> seen.add(m.rawId()));

        BatchFlow.Result result = settle(flow, deliveries("q-order", "z-3", "a-1", "m-2", "a-1"));

        assertThat(result.batched()).isEqualTo(4);
        // before: the store's order (here reversed; PostgreSQL sorts by key): m-2, a-1, z-3
        assertThat(seen).containsExactly("z-3", "a-1", "m-2");
    }

    /** An atomic store that hands the effect the new deliveries in reverse, as a store may use an order of its own. */
    private final class ReversingInbox implements InboxStore<InMemoryUnitOfWork> {
        @Override
        public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super InMemoryUnitOfWork> effect) {
            return inbox.runBatch(deliveries, (work, fresh) -> {
                List<InboxDelivery> reversed = new ArrayList<>(fresh);
                Collections.reverse(reversed);
                effect.run(work, reversed);
            });
        }

        @Override
        public boolean batchesAtomically() {
            return true;
        }

        @Override
        public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super InMemoryUnitOfWork, R> e) {
            return inbox.runOnce(key, fingerprint, e);
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
