package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The copies a settle publishes, without a broker. */
class AmqpMessagesTest {

    @Test
    void aCopyNeverKeepsTheProducersUserIdWhichTheBrokerWouldCheckAgainstIdemkitsOwnUser() {
        AMQP.BasicProperties original = new AMQP.BasicProperties.Builder().messageId("m-1").userId("producer")
                .headers(Map.of("tenant", "acme")).build();
        AttemptRecord failed = new AttemptRecord(1, Instant.parse("2026-12-03T10:00:00Z"), "boom");
        AMQP.BasicProperties retry = AmqpMessages.retryCopy(original, "orders", List.of(), failed,
                Duration.ofMillis(200), 1);
        AMQP.BasicProperties dead = AmqpMessages.deadLetterCopy(original, "orders", List.of(), failed, "gave up",
                Instant.now());
        for (AMQP.BasicProperties copy : List.of(retry, dead)) {
            assertThat(copy.getUserId()).isNull();
            assertThat(copy.getMessageId()).isEqualTo("m-1");
            assertThat(copy.getDeliveryMode()).isEqualTo(2);
            assertThat(AmqpMessages.applicationHeaders(copy.getHeaders())).containsEntry("tenant", "acme");
            assertThat(copy.getHeaders()).doesNotContainKey("tenant");
        }
        assertThat(retry.getExpiration()).isEqualTo("200");
        assertThat(dead.getHeaders()).containsEntry(AmqpMessages.REASON, "gave up");
    }
}
