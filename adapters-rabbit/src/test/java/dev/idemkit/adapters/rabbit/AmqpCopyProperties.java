package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.strings;

import com.rabbitmq.client.AMQP;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The allow-list of what crosses from a received AMQP message into a copy idemkit publishes
 * ({@link AmqpMessages#CROSSING_HEADERS} and {@link AmqpMessages#copy}), over random producer headers and properties:
 * the names RabbitMQ or its plugins act on ({@code CC}, {@code BCC}, {@code x-delay}, ...), idemkit's own vocabulary
 * forged by a producer, and arbitrary names. At the top of every copy there is nothing but the allow-list and what
 * that copy writes itself; the producer's headers survive as data, and copying a copy changes them no more.
 */
class AmqpCopyProperties {
    private static final String QUEUE = "orders";
    private static final AttemptRecord FAILED = new AttemptRecord(1, Instant.parse("2026-12-03T10:00:00Z"), "boom");
    private static final Approval APPROVAL = new Approval("ana", "fixed", Instant.parse("2026-12-03T11:00:00Z"));
    private static final List<String> NAMES = List.of("CC", "BCC", "cc", "x-delay", "x-match", "x-death",
            "x-delivery-count", "x-first-death-queue", "x-last-death-reason", AttemptHistory.HEADER,
            AmqpMessages.REASON, AmqpMessages.ORIGIN_QUEUE, AmqpMessages.DEAD_LETTER_ID, AmqpMessages.EARLIER_DEATHS,
            ConfirmingPublisher.PUBLISH_TAG, DeadLetterHeaders.REDRIVE_APPROVED_BY, "x-dead-letter-routing-key",
            "x-stream-filter-value", AmqpMessages.APPLICATION_HEADERS, "tenant", "traceparent");

    @Test
    void nothingOutsideTheAllowListReachesTheTopOfACopyAndTheProducersHeadersSurviveAsData() {
        qt().withExamples(1000).forAll(producerHeaders(), producerProperties()).checkAssert((headers, base) -> {
            AMQP.BasicProperties received = base.builder().headers(headers).build();
            Map<String, Object> application = AmqpMessages.applicationHeaders(received.getHeaders());
            Map<String, Set<String>> copies = Map.of(
                    "retry", Set.of(AttemptHistory.HEADER),
                    "dead letter", Set.of(AttemptHistory.HEADER, AmqpMessages.REASON, AmqpMessages.ORIGIN_QUEUE,
                            AmqpMessages.DEAD_LETTERED_AT, AmqpMessages.DEAD_LETTER_ID),
                    "redrive", Set.of(DeadLetterHeaders.REDRIVE_APPROVED_BY, DeadLetterHeaders.REDRIVE_REASON,
                            DeadLetterHeaders.REDRIVE_APPROVED_AT, DeadLetterHeaders.PREVIOUS_REASON));
            copies.forEach((kind, written) -> {
                AMQP.BasicProperties copy = copy(kind, received);
                Set<String> allowed = new HashSet<>(AmqpMessages.CROSSING_HEADERS);
                allowed.addAll(written);
                assertThat(copy.getHeaders().keySet()).as("%s copy of %s", kind, headers.keySet())
                        .isSubsetOf(allowed);
                assertThat(copy.getUserId()).as("user_id").isNull();
                assertThat(copy.getClusterId()).as("cluster_id").isNull();
                assertThat(copy.getDeliveryMode()).isEqualTo(2);
                assertThat(copy.getMessageId()).isEqualTo(received.getMessageId());
                assertThat(copy.getExpiration()).isEqualTo(kind.equals("retry") ? "200" : null);
                assertThat(copy.getCorrelationId()).isEqualTo(received.getCorrelationId());
                assertThat(AmqpMessages.applicationHeaders(copy.getHeaders())).as("the producer's headers, as data")
                        .isEqualTo(application);
                AMQP.BasicProperties again = copy(kind, copy);
                assertThat(AmqpMessages.applicationHeaders(again.getHeaders())).as("a copy of the copy")
                        .isEqualTo(application);
            });
        });
    }

    private static AMQP.BasicProperties copy(String kind, AMQP.BasicProperties received) {
        return switch (kind) {
            case "retry" -> AmqpMessages.retryCopy(received, QUEUE, List.of(), FAILED, Duration.ofMillis(200), 1);
            case "dead letter" -> AmqpMessages.deadLetterCopy(received, QUEUE, List.of(), FAILED, "gave up",
                    Instant.parse("2026-12-03T10:00:01Z"));
            default -> AmqpMessages.redriveCopy(received, QUEUE, APPROVAL);
        };
    }

    private static Gen<Map<String, Object>> producerHeaders() {
        Gen<String> name = integers().between(0, NAMES.size()).zip(strings().basicLatinAlphabet().ofLengthBetween(1, 12),
                (i, random) -> i == NAMES.size() ? random : NAMES.get(i));
        Gen<Object> value = integers().between(0, 3).zip(strings().basicLatinAlphabet().ofLengthBetween(0, 20),
                (kind, text) -> switch (kind) {
                    case 0 -> (Object) text;
                    case 1 -> (Object) (long) text.length();
                    case 2 -> (Object) List.of(text);
                    default -> (Object) Map.of("queue", text, "reason", "expired");
                });
        return lists().of(name.zip(value, Map::entry)).ofSizeBetween(0, 12).map(entries -> {
            Map<String, Object> headers = new HashMap<>();
            entries.forEach(e -> headers.put(e.getKey(), e.getValue()));
            return headers;
        });
    }

    private static Gen<AMQP.BasicProperties> producerProperties() {
        return strings().basicLatinAlphabet().ofLengthBetween(1, 10).zip(integers().between(0, 1),
                (text, withAll) -> withAll == 0
                        ? new AMQP.BasicProperties.Builder().messageId("m-" + text).build()
                        : new AMQP.BasicProperties.Builder().messageId("m-" + text).userId(text).clusterId(text)
                                .expiration("60000").replyTo(text).correlationId(text).type(text).appId(text)
                                .contentType("application/json").priority(3).deliveryMode(1)
                                .timestamp(new Date(1_700_000_000_000L)).build());
    }
}
