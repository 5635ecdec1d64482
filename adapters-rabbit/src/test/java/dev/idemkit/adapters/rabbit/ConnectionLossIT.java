package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.OutgoingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The broker force-closes the consumer's connection mid-stream ({@code rabbitmqctl close_connection});
 * automatic recovery reconnects, reopens the channels and consumers, and the inbox absorbs the
 * redeliveries of what was in flight: every message's effect happens exactly once.
 */
class ConnectionLossIT extends RabbitITBase {
    private static final int MESSAGES = 300;

    @Test
    void afterAForcedConnectionCloseTheConsumerRecoversAndEveryEffectHappensOnce() throws Exception {
        String queue = queue("connection-loss");
        String name = RabbitFixtures.anyConnectionName("loss");
        RabbitMessageTransport consumer = closeLater(new RabbitMessageTransport(
                RabbitFixtures.settings().withConsumers(2).withPrefetch(20), Clock.system(), name));
        InMemoryCounter effects = new InMemoryCounter();
        Set<String> seen = ConcurrentHashMap.newKeySet();
        Consumers consumers = new Consumers();
        for (int i = 0; i < MESSAGES; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, ("n=" + i).getBytes(StandardCharsets.UTF_8)));
        }
        subscribe(consumer, queue, consumers.runtime((message, work) -> {
            seen.add(message.rawId());
            effects.add(work, message.rawId(), 1);
            Thread.sleep(5);
        }));
        Eventually.await(Duration.ofSeconds(30), "a third of the stream", () -> seen.size() >= MESSAGES / 3);

        assertThat(RabbitFixtures.closeConnections(name + "-consume")).as("connections force-closed").isEqualTo(1);

        Eventually.await(Duration.ofSeconds(60), "every message processed after the recovery",
                () -> consumers.count(Decision.PROCESSED) == MESSAGES);
        Eventually.await(Duration.ofSeconds(30), "the queue drained (redeliveries settled as duplicates)", () -> {
            try {
                return ready(queue) == 0;
            } catch (Exception e) {
                return false;
            }
        });
        for (int i = 0; i < MESSAGES; i++) {
            assertThat(effects.read("m-" + i)).as("effect of m-%d", i).isEqualTo(1);
        }
        assertThat(consumers.count(Decision.DEAD_LETTERED)).isZero();
        assertThat(transport.deadLetterQueue().depth(queue)).isZero();
    }
}
