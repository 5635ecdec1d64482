package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.retry.NonRetryableException;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Messages no retry can fix go to the DLQ at once with their reason: nothing requeued forever, nothing dropped. */
class BadInputIT extends RabbitITBase {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void noMessageIdInvalidJsonAndAnOversizedBodyAreDeadLetteredAtOnceWithTheirReasons() throws Exception {
        String queue = queue("bad-input");
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        Consumers consumers = new Consumers();
        subscribe(transport, queue, consumers.runtime(
                ConsumerSettings.defaults("bad-input").withRetryPolicy(Consumers.quickRetries()),
                (message, work) -> {
                    handled.computeIfAbsent(message.rawId(), k -> new AtomicInteger()).incrementAndGet();
                    try {
                        JSON.readTree(message.body());
                    } catch (JsonProcessingException e) {
                        throw new NonRetryableException("invalid JSON: " + e.getOriginalMessage(), e);
                    }
                }));

        try (Channel ch = raw.createChannel()) {
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                    "{\"order_id\":\"no-id\"}".getBytes(StandardCharsets.UTF_8));
        }
        transport.publish(queue, OutgoingMessage.of("bad-json", "{\"order_id\": ".getBytes(StandardCharsets.UTF_8)));
        byte[] big = new byte[ConsumerSettings.DEFAULT_MAX_BODY_BYTES + 1];
        Arrays.fill(big, (byte) ' ');
        big[0] = '1';
        transport.publish(queue, OutgoingMessage.of("too-big", big));
        transport.publish(queue, OutgoingMessage.of("good", "{\"ok\":true}".getBytes(StandardCharsets.UTF_8)));

        RabbitDeadLetterQueue dlq = transport.deadLetterQueue();
        Eventually.await(Duration.ofSeconds(30), "three dead letters and one processed",
                () -> dlq.depth(queue) == 3 && consumers.count(Decision.PROCESSED) == 1);

        Map<String, DeadLetter> byId = dlq.peek(queue, 10).stream().map(DeadLetterEntry::deadLetter)
                .collect(Collectors.toMap(d -> String.valueOf(d.original().rawId()), d -> d));
        assertThat(byId.get("null").reason()).contains("no message id");
        assertThat(byId.get("bad-json").reason()).startsWith("non-retryable: NonRetryableException: invalid JSON");
        assertThat(byId.get("too-big").reason()).contains("exceeds the limit of " + ConsumerSettings.DEFAULT_MAX_BODY_BYTES);
        assertThat(byId.get("too-big").original().body()).isEqualTo(big);
        assertThat(byId.values()).allSatisfy(d -> {
            assertThat(d.attempts()).as("dead-lettered on the first attempt").hasSize(1);
            assertThat(d.originQueue()).isEqualTo(queue);
        });
        assertThat(handled.keySet()).as("the handler never saw what had no id or was too big")
                .containsExactlyInAnyOrder("bad-json", "good");

        Eventually.pause(1500);
        assertThat(handled.get("bad-json")).as("never retried").hasValue(1);
        assertThat(dlq.depth(queue)).isEqualTo(3);
        assertThat(consumers.count(Decision.RETRIED)).isZero();
        for (String q : List.of(queue, RabbitTopology.retryQueue(queue, 1), RabbitTopology.retryQueue(queue, 2))) {
            assertThat(ready(q)).as(q).isZero();
        }
    }
}
