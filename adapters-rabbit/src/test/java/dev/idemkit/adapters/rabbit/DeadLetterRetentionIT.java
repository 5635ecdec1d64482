package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.OutgoingMessage;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Nothing expires a dead letter unseen: {@code Q.dlq} has no TTL, no length limit and nowhere to dead-letter to (its
 * arguments as the broker holds them), and the DLQ port says the broker keeps dead letters until
 * they are removed. How old a dead letter may be for a redrive on one approval is the dead-letter service's rule.
 */
class DeadLetterRetentionIT extends RabbitITBase {

    @Test
    void theDeadLetterQueueHasNoTtlAndKeepsItsDeadLetters() throws Exception {
        String queue = queue("dlq-kept");
        subscribe(transport, queue, d -> d.deadLetter("non-retryable: test", new AttemptRecord(1, Instant.now(), "x")));
        transport.publish(queue, OutgoingMessage.of("m-1", new byte[] {'x'}));
        Eventually.await(Duration.ofSeconds(30), "the dead letter", () -> transport.deadLetterQueue().depth(queue) == 1);
        String dlq = RabbitTopology.deadLetterQueue(queue);
        assertThat(RabbitFixtures.brokerQueues(dlq).get(dlq).arguments()).as("what the broker holds")
                .doesNotContainKeys("x-message-ttl", "x-expires", "x-max-length", "x-max-length-bytes",
                        "x-dead-letter-exchange");
        assertThat(transport.deadLetterQueue().retention(queue)).isEmpty();
        Eventually.pause(1500);
        assertThat(transport.deadLetterQueue().depth(queue)).isEqualTo(1);
    }
}
