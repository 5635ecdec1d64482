package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutgoingMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter queue keeps a dead letter for the configured retention and no longer: the broker
 * enforces it ({@code x-message-ttl} on {@code Q.dlq}), so the dedup window that the app checks at
 * start-up against that retention is the one RabbitMQ really applies.
 */
class DeadLetterRetentionIT extends RabbitITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    void aDeadLetterOlderThanTheRetentionIsRemovedByTheBroker() {
        String queue = queue("dlq-retention");
        RabbitMessageTransport shortLived = closeLater(new RabbitMessageTransport(RabbitFixtures.settings()
                .withDeadLetterRetention(Duration.ofSeconds(2)), Clock.system(), RabbitFixtures.anyConnectionName("ret")));
        transport.deleteTopology(queue); // declared by the shared transport with the default retention
        subscribe(shortLived, queue, d -> d.deadLetter("non-retryable: test", new AttemptRecord(1, Instant.now(), "x")));
        assertThat(shortLived.deadLetterQueue().retention(queue)).contains(Duration.ofSeconds(2));
        shortLived.publish(queue, OutgoingMessage.of("m-1", new byte[] {'x'}));
        Eventually.await(PATIENCE, "the dead letter", () -> shortLived.deadLetterQueue().depth(queue) == 1);
        Eventually.await(PATIENCE, "its expiry from the DLQ", () -> shortLived.deadLetterQueue().depth(queue) == 0);
    }

    @Test
    void aDeadLetterQueueDeclaredEarlierWithoutARetentionIsKeptAndTheTopologyStillDeclares() throws Exception {
        String queue = RabbitFixtures.anyQueue("dlq-legacy");
        try (Channel ch = raw.createChannel()) {
            ch.queueDeclare(RabbitTopology.deadLetterQueue(queue), true, false, false, Map.of());
        }
        try {
            transport.declare(queue);
            transport.publish(queue, OutgoingMessage.of("m-1", new byte[] {'x'}));
            assertThat(ready(queue)).isEqualTo(1);
            assertThat(transport.deadLetterQueue().retention(queue)).as("the broker keeps them until removed").isEmpty();
        } finally {
            transport.deleteTopology(queue);
        }
    }
}
