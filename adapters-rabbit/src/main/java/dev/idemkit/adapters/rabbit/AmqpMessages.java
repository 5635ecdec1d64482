package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutgoingMessage;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Between AMQP messages and idemkit's: properties, header encoding, and the headers the adapter adds
 * (attempt history, dead-letter reason, origin queue, redrive approval).
 */
final class AmqpMessages {
    static final String REASON = "x-idemkit-dead-letter-reason";
    static final String ORIGIN_QUEUE = "x-idemkit-origin-queue";
    static final String DEAD_LETTERED_AT = "x-idemkit-dead-lettered-at";
    static final String DEAD_LETTER_ID = "x-idemkit-dead-letter-id";
    static final String REDRIVE_APPROVED_BY = "x-idemkit-redrive-approved-by";
    static final String REDRIVE_REASON = "x-idemkit-redrive-reason";
    static final String REDRIVE_APPROVED_AT = "x-idemkit-redrive-approved-at";
    static final String X_DEATH = "x-death";
    static final int MAX_REASON_LENGTH = 1000;

    /** Transport bookkeeping, not the producer's headers: hidden from {@link Message#headers()}. */
    private static final Set<String> INTERNAL = Set.of(AttemptHistory.HEADER, REASON, ORIGIN_QUEUE, DEAD_LETTERED_AT,
            DEAD_LETTER_ID, ConfirmingPublisher.PUBLISH_TAG, X_DEATH);

    private static final Logger LOG = LoggerFactory.getLogger(AmqpMessages.class);

    private AmqpMessages() {}

    /** Persistent, {@code message_id} = the idempotency key, headers as strings. */
    static AMQP.BasicProperties propertiesOf(OutgoingMessage message, long epochMillis) {
        return new AMQP.BasicProperties.Builder()
                .messageId(message.id())
                .deliveryMode(2)
                .timestamp(new Date(epochMillis))
                .headers(new HashMap<>(message.headers()))
                .build();
    }

    /** The message as handlers see it: the producer's headers as strings, without transport bookkeeping. */
    static Message toMessage(AMQP.BasicProperties props, byte[] body, String queue) {
        return new Message(props.getMessageId(), body, userHeaders(props.getHeaders()), queue);
    }

    static Map<String, String> userHeaders(Map<String, Object> headers) {
        Map<String, String> out = new HashMap<>();
        if (headers == null) {
            return out;
        }
        headers.forEach((name, value) -> {
            if (!INTERNAL.contains(name) && !name.startsWith("x-first-death-") && !name.startsWith("x-last-death-")) {
                String text = text(value);
                if (text != null) {
                    out.put(name, text);
                }
            }
        });
        return out;
    }

    /** A header value as text: strings and scalars; tables and arrays are not the producer's strings. */
    static String text(Object value) {
        if (value instanceof LongString || value instanceof String || value instanceof Number
                || value instanceof Boolean) {
            return value.toString();
        }
        if (value instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (value instanceof Date date) {
            return date.toInstant().toString();
        }
        return null;
    }

    /** The attempts that travelled with the message; a history that is not ours is logged and ignored. */
    static List<AttemptRecord> history(Map<String, Object> headers) {
        String encoded = headers == null ? null : text(headers.get(AttemptHistory.HEADER));
        try {
            return AttemptHistory.decode(encoded);
        } catch (IllegalArgumentException e) {
            LOG.warn("decision=ignore-history reason=\"unreadable {} header: {}\"", AttemptHistory.HEADER, e.getMessage());
            return List.of();
        }
    }

    /** The same properties with {@code headers}, plus an {@code expiration} when {@code expirationMillis >= 0}. */
    static AMQP.BasicProperties copy(AMQP.BasicProperties props, Map<String, Object> headers, long expirationMillis) {
        AMQP.BasicProperties.Builder b = props.builder().headers(headers);
        b.expiration(expirationMillis >= 0 ? Long.toString(expirationMillis) : null);
        if (props.getDeliveryMode() == null || props.getDeliveryMode() != 2) {
            b.deliveryMode(2);
        }
        return b.build();
    }

    static Map<String, Object> mutableHeaders(AMQP.BasicProperties props) {
        return props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
    }

    /** Ids from the wire may hold anything: never let one forge a log line. */
    static String printable(String raw) {
        if (raw == null) {
            return "-";
        }
        String cut = raw.length() > 80 ? raw.substring(0, 80) + "..." : raw;
        return cut.replaceAll("[^\\x21-\\x7E]", "?");
    }

    static String cut(String s, int max) {
        return s.length() > max ? s.substring(0, max) : s;
    }
}
