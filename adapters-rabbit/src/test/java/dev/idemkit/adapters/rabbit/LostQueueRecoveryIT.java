package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutgoingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The consuming connection drops and, while it is away, the broker loses the queue (a reset, a node back without its
 * data, an operator): the client's recovery cannot register the consumers (404) and the broker closes their channels.
 * The subscription declares the topology again and consumes with exactly its configured number of consumers — not
 * more (a refused basic.consume used to schedule two reopens, doubling every second) and not none.
 */
class LostQueueRecoveryIT extends RabbitITBase {

    @Test
    void aQueueLostWhileTheConnectionWasAwayIsDeclaredAgainAndConsumedWithTheConfiguredConsumers() throws Exception {
        String queue = queue("lost");
        String name = RabbitFixtures.anyConnectionName("lost");
        RabbitMessageTransport consumer = closeLater(new RabbitMessageTransport(
                RabbitFixtures.settings().withConsumers(2), Clock.system(), name));
        Set<String> seen = ConcurrentHashMap.newKeySet();
        subscribe(consumer, queue, d -> {
            seen.add(d.message().rawId());
            d.ack();
        });
        assertThat(consumerCount(queue)).isEqualTo(2);

        assertThat(RabbitFixtures.closeConnections(name + "-consume")).isEqualTo(1);
        try (Channel ch = raw.createChannel()) {
            ch.queueDelete(queue); // gone while the consumers are away: nobody is told
        }

        Eventually.await(Duration.ofSeconds(30), "the queue declared again with its two consumers", () -> {
            try {
                return consumerCount(queue) == 2;
            } catch (Exception notThereYet) {
                return false;
            }
        });
        transport.publish(queue, OutgoingMessage.of("after", "x".getBytes(StandardCharsets.UTF_8)));
        Eventually.await(Duration.ofSeconds(20), "a message published afterwards, consumed", () -> seen.contains("after"));
        Eventually.pause(3_000); // time for any surplus reopen to land
        assertThat(consumerCount(queue)).as("exactly the configured consumers, no surplus").isEqualTo(2);
    }

    private long consumerCount(String queue) throws Exception {
        try (Channel ch = raw.createChannel()) {
            return ch.queueDeclarePassive(queue).getConsumerCount();
        }
    }
}
