package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.ports.forwarding.ForwardingInboxStore;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.LogPosition;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Offsets in the database, as the one flow sees them: a store that keeps positions gets, with each unit of work, the
 * positions its deliveries report once all of them are settled (the batch's deliveries asked together, one position
 * per partition); a store that does not is never asked to write one, and the deliveries are not even asked.
 */
class PositionsFlowTest {
    private final List<List<LogPosition>> written = new CopyOnWriteArrayList<>();
    private final List<Integer> askedWith = new CopyOnWriteArrayList<>();

    /** Keeps positions: records what it is given with each unit of work. */
    private final class Keeping extends ForwardingInboxStore<InMemoryUnitOfWork> {
        Keeping() {
            super(new InMemoryInboxStore());
        }

        @Override
        public boolean keepsPositions() {
            return true;
        }

        @Override
        public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, List<LogPosition> positions,
                Effect<? super InMemoryUnitOfWork, R> effect) {
            written.add(positions);
            return super.runOnce(key, fingerprint, effect);
        }

        @Override
        public List<Outcome> runBatch(List<InboxDelivery> deliveries, List<LogPosition> positions,
                BatchEffect<? super InMemoryUnitOfWork> effect) {
            written.add(positions);
            return super.runBatch(deliveries, effect);
        }
    }

    /** A delivery of partition {@code partition} at {@code offset}; its position: after the highest offset settled. */
    private RecordingDelivery delivery(String id, int partition, long offset) {
        return new RecordingDelivery(new Message(id, id.getBytes(StandardCharsets.UTF_8), Map.of(), "q"), 1) {
            @Override
            public Optional<LogPosition> positionAfter(List<? extends Delivery> together) {
                askedWith.add(together.size());
                assertThat(List.<Delivery>copyOf(together)).as("the delivery itself is among those settled together")
                        .contains(this);
                return Optional.of(new LogPosition("g", "t", partition, offset + 1, "log"));
            }
        };
    }

    private static DeliveryFlow flow() {
        return new DeliveryFlow(ConsumerSettings.defaults("positions").withRetryPolicy(RetryPolicy.defaults()),
                () -> 0.5, Clock.system(), ConsumerEvents.none());
    }

    @Test
    void aSingleDeliveryHandsItsPositionToAStoreThatKeepsThem() {
        RecordingDelivery d = delivery("m-1", 0, 41);
        flow().run(d, new Keeping(), (m, work) -> { });
        assertThat(written).containsExactly(List.of(new LogPosition("g", "t", 0, 42, "log")));
        assertThat(askedWith).containsExactly(1);
        assertThat(d.settlement).isEqualTo(RecordingDelivery.Settlement.ACK);
    }

    @Test
    void aStoreThatKeepsNoPositionsIsGivenNoneAndNoDeliveryIsAsked() {
        RecordingDelivery d = delivery("m-1", 0, 41);
        flow().run(d, new InMemoryInboxStore(), (m, work) -> { });
        assertThat(askedWith).isEmpty();
        assertThat(d.settlement).isEqualTo(RecordingDelivery.Settlement.ACK);
    }

    @Test
    void aBatchHandsOnePositionPerPartitionTheHighestAskedWithTheWholeBatch() {
        Keeping store = new Keeping();
        BatchFlow<InMemoryUnitOfWork> batch = new BatchFlow<>(flow(), store, (messages, work) -> { },
                (m, work) -> { });
        List<Delivery> deliveries = List.of(delivery("a", 0, 10), delivery("b", 1, 3), delivery("c", 0, 12),
                delivery("d", 1, 2));
        List<BatchFlow.Item> items = new ArrayList<>();
        deliveries.forEach(d -> items.add(batch.item(d)));
        BatchFlow.Result result = batch.settle(items, Collections.newSetFromMap(new IdentityHashMap<>()));

        assertThat(result.batched()).isEqualTo(4);
        assertThat(written).hasSize(1);
        assertThat(written.get(0)).containsExactlyInAnyOrder(new LogPosition("g", "t", 0, 13, "log"),
                new LogPosition("g", "t", 1, 4, "log"));
        assertThat(askedWith).containsOnly(4);
    }
}
