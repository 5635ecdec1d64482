package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Message;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.forwarding.ForwardingDelivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The seed's scenarios 2 (processing ok, ACK lost) and 3 (consumer dies after processing) for real:
 * the effect commits through the inbox, the ack never reaches the broker, the broker redelivers, and
 * the inbox turns the redelivery into a duplicate: the effect happens once.
 */
class AckLossAndCrashIT extends RabbitITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final InMemoryCounter balance = new InMemoryCounter();
    private final Consumers consumers = new Consumers();
    private final List<Boolean> redeliveredFlags = new CopyOnWriteArrayList<>();

    private DeliveryHandler creditingRuntime() {
        DeliveryHandler runtime = consumers.runtime((Message m, dev.idemkit.ports.memory.InMemoryUnitOfWork work) ->
                balance.add(work, "account-1", 100));
        return d -> {
            redeliveredFlags.add(d.redelivered());
            runtime.onDelivery(d);
        };
    }

    @Test
    void anEffectWhoseAckIsLostWhenTheChannelClosesHappensOnceAfterTheRedelivery() throws Exception {
        String queue = queue("ack-lost");
        DeliveryHandler runtime = creditingRuntime();
        AtomicBoolean ackLost = new AtomicBoolean();
        Subscription first = transport.subscribe(queue, d -> runtime.onDelivery(new LosingAck(d, () -> ackLost.set(true))));
        transport.publish(queue, OutgoingMessage.of("pay-1", "credit 100".getBytes(StandardCharsets.UTF_8)));
        Eventually.await(PATIENCE, "the effect and the lost ack", ackLost::get);
        assertThat(balance.read("account-1")).isEqualTo(100);
        first.close(); // the channel closes with the delivery unacknowledged: the broker requeues it

        subscribe(transport, queue, runtime);
        Eventually.await(PATIENCE, "the redelivery, seen as a duplicate", () -> consumers.count(Decision.DUPLICATE) == 1);
        assertThat(balance.read("account-1")).as("credited once").isEqualTo(100);
        assertThat(redeliveredFlags).containsExactly(false, true);
        assertThat(ready(queue)).isZero();
    }

    @Test
    void aConsumerKilledAfterTheEffectBeforeItsAckRunsTheEffectOnceAfterTheRedelivery() throws Exception {
        String queue = queue("killed");
        RabbitMessageTransport doomed = new RabbitMessageTransport(RabbitFixtures.settings(), Clock.system(),
                RabbitFixtures.anyConnectionName("killed"));
        DeliveryHandler runtime = creditingRuntime();
        AtomicBoolean killed = new AtomicBoolean();
        doomed.subscribe(queue, d -> runtime.onDelivery(new LosingAck(d, () -> {
            doomed.abort(); // the process dies between the commit and the ack
            killed.set(true);
        })));
        transport.publish(queue, OutgoingMessage.of("pay-2", "credit 100".getBytes(StandardCharsets.UTF_8)));
        Eventually.await(PATIENCE, "the effect and the crash", killed::get);
        assertThat(balance.read("account-1")).isEqualTo(100);

        subscribe(transport, queue, runtime);
        Eventually.await(PATIENCE, "the redelivery, seen as a duplicate", () -> consumers.count(Decision.DUPLICATE) == 1);
        assertThat(balance.read("account-1")).as("credited once").isEqualTo(100);
        assertThat(consumers.count(Decision.PROCESSED)).isEqualTo(1);
        assertThat(redeliveredFlags).containsExactly(false, true);
        assertThat(ready(queue)).isZero();
    }

    /** A delivery whose ack never reaches the broker: instead, {@code instead} runs. */
    private static final class LosingAck extends ForwardingDelivery {
        private final Runnable instead;

        LosingAck(Delivery d, Runnable instead) {
            super(d);
            this.instead = instead;
        }

        @Override
        public void ack() {
            instead.run();
        }
    }
}
