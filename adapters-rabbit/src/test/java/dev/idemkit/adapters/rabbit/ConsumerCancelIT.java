package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.OutgoingMessage;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A consumer the broker cancels (its queue deleted and declared again, a node losing a classic queue)
 * is subscribed again, topology included: a subscription never stops silently.
 */
class ConsumerCancelIT extends RabbitITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    void aConsumerCancelledByTheBrokerResubscribesAndConsumesWhatComesNext() throws Exception {
        String queue = queue("cancelled");
        Set<String> seen = ConcurrentHashMap.newKeySet();
        RabbitMessageTransport two = closeLater(new RabbitMessageTransport(RabbitFixtures.settings().withConsumers(2),
                dev.idemkit.ports.out.Clock.system(), RabbitFixtures.anyConnectionName("cancelled")));
        subscribe(two, queue, d -> {
            seen.add(d.message().rawId());
            d.ack();
        });
        transport.publish(queue, OutgoingMessage.of("before", new byte[] {'b'}));
        Eventually.await(PATIENCE, "the first message", () -> seen.contains("before"));

        try (Channel ch = raw.createChannel()) {
            ch.queueDelete(queue); // the broker cancels both consumers
        }
        Eventually.await(PATIENCE, "the queue declared again and both consumers back", () -> consumers(queue) == 2);
        try (Channel ch = raw.createChannel()) {
            for (int i = 1; i <= 5; i++) {
                ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("after-" + i).deliveryMode(2)
                        .build(), new byte[] {'a'});
            }
        }
        Eventually.await(PATIENCE, "the messages published after the cancel",
                () -> seen.containsAll(Set.of("after-1", "after-2", "after-3", "after-4", "after-5")));
        assertThat(ready(queue)).isZero();
    }

    private long consumers(String queue) {
        try (Channel ch = raw.createChannel()) {
            return ch.queueDeclarePassive(queue).getConsumerCount();
        } catch (Exception e) {
            return -1; // not there yet
        }
    }
}
