package dev.idemkit.ports.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the reference transport does beyond the contract: its concurrency bound and what close gives back. */
class InMemoryMessageTransportTest {
    private static final Duration PATIENCE = Duration.ofSeconds(10);
    private final InMemoryMessageTransport transport = new InMemoryMessageTransport(2, Clock.system(), Duration.ofMillis(300));

    @AfterEach
    void close() {
        transport.close();
    }

    @Test
    void aSubscriptionHoldsAtMostItsConcurrencyOfUnsettledDeliveries() {
        List<Delivery> held = new CopyOnWriteArrayList<>();
        transport.subscribe("q", held::add);
        for (int i = 0; i < 5; i++) {
            transport.publish("q", OutgoingMessage.of("m-" + i, bytes("x")));
        }
        Eventually.await(PATIENCE, "two deliveries", () -> held.size() == 2);
        Eventually.pause(200);
        assertThat(held).hasSize(2);

        // the first two are handed over on two threads at once: in either order
        assertThat(held).extracting(d -> d.message().rawId()).containsExactlyInAnyOrder("m-0", "m-1");
        held.get(0).ack();
        Eventually.await(PATIENCE, "a third delivery once one settled", () -> held.size() == 3);
        assertThat(held.get(2).message().rawId()).isEqualTo("m-2");
    }

    @Test
    void closingGivesUnsettledDeliveriesBackForTheNextSubscriber() {
        List<Delivery> held = new CopyOnWriteArrayList<>();
        Subscription first = transport.subscribe("q", held::add);
        transport.publish("q", OutgoingMessage.of("m-1", bytes("x")));
        Eventually.await(PATIENCE, "the delivery", () -> held.size() == 1);
        Thread closer = new Thread(first::close);
        closer.start();

        List<Delivery> next = new CopyOnWriteArrayList<>();
        transport.subscribe("q", d -> {
            next.add(d);
            d.ack();
        });
        Eventually.await(PATIENCE, "the message given back after the grace period", () -> next.size() == 1);
        assertThat(next.get(0).message().rawId()).isEqualTo("m-1");
        assertThat(next.get(0).attempt()).isEqualTo(1);
        assertThat(next.get(0).redelivered()).isTrue();
        held.get(0).ack(); // too late: ignored, like an ack on a closed channel
        assertThat(transport.depth("q")).isZero();
    }

    @Test
    void aDeliveryIsSettledOnlyOnce() {
        AtomicInteger failures = new AtomicInteger();
        transport.subscribe("q", d -> {
            d.ack();
            try {
                d.ack();
            } catch (IllegalStateException expected) {
                failures.incrementAndGet();
            }
        });
        transport.publish("q", OutgoingMessage.of("m-1", bytes("x")));
        Eventually.await(PATIENCE, "the second ack refused", () -> failures.get() == 1);
        assertThatThrownBy(() -> new InMemoryMessageTransport(0, Clock.system()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
