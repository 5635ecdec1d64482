package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import dev.idemkit.adapters.rabbit.RabbitDeadLetter.BrokerDeath;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutgoingMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Between AMQP messages and idemkit's: properties, header encoding, and the headers the adapter adds
 * (attempt history, dead-letter reason, origin queue, redrive approval).
 */
final class AmqpMessages {
    static final String REASON = DeadLetterHeaders.REASON;
    static final String ORIGIN_QUEUE = DeadLetterHeaders.ORIGIN_QUEUE;
    static final String DEAD_LETTERED_AT = DeadLetterHeaders.DEAD_LETTERED_AT;
    static final String DEAD_LETTER_ID = DeadLetterHeaders.DEAD_LETTER_ID;
    static final String X_DEATH = "x-death";
    /** x-death entries moved out of x-death by a republished copy (see {@link #copyHeaders}), newest first. */
    static final String EARLIER_DEATHS = "x-idemkit-earlier-deaths";
    /** Set by a quorum queue on a redelivery: how often the broker delivered this copy before; the broker's, not the producer's. */
    static final String DELIVERY_COUNT = "x-delivery-count";
    static final int MAX_REASON_LENGTH = 1000;
    /**
     * On a copy idemkit publishes: the producer's own headers, nested in this one table, where neither the broker nor
     * a plugin nor idemkit looks (a {@code CC}, {@code BCC} or {@code x-delay} there is data, not routing).
     */
    static final String APPLICATION_HEADERS = "x-idemkit-headers";
    /**
     * The one allow-list of the headers that cross from a received message into a copy idemkit publishes (a retry, a
     * dead letter, a redrive): the producer's headers as one table, and the broker's death records, moved by the cycle
     * rule of {@link #copyHeaders}. idemkit's own headers are then written by the copy, never carried over; nothing
     * else crosses. The properties' allow-list is {@link #copy}.
     */
    static final Set<String> CROSSING_HEADERS = Set.of(APPLICATION_HEADERS, X_DEATH, EARLIER_DEATHS);

    /** Transport bookkeeping, not the producer's headers: hidden from {@link Message#headers()}. */
    private static final Set<String> INTERNAL = Set.of(AttemptHistory.HEADER, REASON, ORIGIN_QUEUE, DEAD_LETTERED_AT,
            DEAD_LETTER_ID, ConfirmingPublisher.PUBLISH_TAG, X_DEATH, EARLIER_DEATHS, DELIVERY_COUNT, APPLICATION_HEADERS);

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

    /**
     * The message as handlers see it: the producer's headers as strings (on a copy, those of its
     * {@value #APPLICATION_HEADERS} table, with idemkit's redrive headers over them), without transport bookkeeping.
     */
    static Message toMessage(AMQP.BasicProperties props, byte[] body, String queue) {
        Map<String, String> visible = new HashMap<>();
        if (props.getHeaders() != null && props.getHeaders().get(APPLICATION_HEADERS) instanceof Map<?, ?> nested) {
            visible.putAll(userHeaders(strings(nested)));
        }
        visible.putAll(userHeaders(props.getHeaders()));
        return new Message(props.getMessageId(), body, visible, queue);
    }

    /**
     * The producer's headers of a received message: the {@value #APPLICATION_HEADERS} table of a copy idemkit
     * published (every copy has one, empty or not), or else every header but the broker's records of deaths and
     * deliveries and idemkit's own bookkeeping names. This is what a copy carries in its own table, so that copying a
     * copy changes nothing.
     */
    static Map<String, Object> applicationHeaders(Map<String, Object> headers) {
        if (headers == null) {
            return new HashMap<>();
        }
        if (headers.get(APPLICATION_HEADERS) instanceof Map<?, ?> nested) {
            return strings(nested);
        }
        // a producer's message, or a copy written before copies nested them: the broker's records and idemkit's own
        // bookkeeping names are not the producer's data
        Map<String, Object> out = new HashMap<>();
        headers.forEach((name, value) -> {
            if (!INTERNAL.contains(name) && !name.startsWith("x-first-death-") && !name.startsWith("x-last-death-")) {
                out.put(name, value);
            }
        });
        return out;
    }

    private static Map<String, Object> strings(Map<?, ?> table) {
        Map<String, Object> out = new HashMap<>();
        table.forEach((name, value) -> out.put(String.valueOf(name), value));
        return out;
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

    /**
     * The attempts that travelled with a message delivered from {@code queue}: idemkit's history header, but only
     * on a message that came back from one of {@code queue}'s retry buckets (the newest {@code x-death} entry, the
     * broker's own, names the bucket). On anything else the header is the producer's data, and a producer cannot
     * skip its message's retries by writing one: the attempt count starts at 1.
     */
    static List<AttemptRecord> trustedHistory(Map<String, Object> headers, String queue) {
        List<BrokerDeath> deaths = deaths(headers == null ? null : headers.get(X_DEATH));
        boolean fromOurBucket = !deaths.isEmpty() && RabbitTopology.isRetryQueueOf(deaths.get(0).queue(), queue);
        return fromOurBucket ? history(headers) : List.of();
    }

    /**
     * The headers of a copy that idemkit publishes (a retry, a dead letter, a redrive). RabbitMQ silently drops a
     * message that it dead-letters into a queue already named in its {@code x-death} when no rejection happened
     * in between (cycle detection): a retry copy is dead-lettered back into Q by its bucket, a dead-letter copy into
     * Q.dlq by the hold queue. So the {@code x-death} entries of Q and Q.dlq move to {@value #EARLIER_DEATHS}
     * (newest first, after those moved before), where they stay inspectable; the entries of the retry buckets and
     * the hold queue stay in {@code x-death}.
     */
    static Map<String, Object> copyHeaders(AMQP.BasicProperties props, String queue) {
        Map<String, Object> received = props.getHeaders() == null ? Map.of() : props.getHeaders();
        Map<String, Object> headers = new HashMap<>();
        // always, empty or not: the table is what marks a copy, so that a copy of a copy never takes idemkit's own
        // headers for the producer's
        headers.put(APPLICATION_HEADERS, applicationHeaders(received));
        if (received.get(APPLICATION_HEADERS) instanceof Map<?, ?> && received.get(EARLIER_DEATHS) instanceof List<?> earlier) {
            headers.put(EARLIER_DEATHS, earlier); // idemkit's, on one of its copies; a producer's is not carried
        }
        if (!(received.get(X_DEATH) instanceof List<?> deaths)) {
            return headers;
        }
        headers.put(X_DEATH, deaths);
        Set<String> cycling = Set.of(queue, RabbitTopology.deadLetterQueue(queue));
        List<Object> kept = new ArrayList<>();
        List<Object> moved = new ArrayList<>();
        for (Object d : deaths) {
            boolean cycles = d instanceof Map<?, ?> m && cycling.contains(String.valueOf(m.get("queue")));
            (cycles ? moved : kept).add(d);
        }
        if (moved.isEmpty()) {
            return headers;
        }
        if (headers.get(EARLIER_DEATHS) instanceof List<?> before) {
            moved.addAll(before);
        }
        headers.put(EARLIER_DEATHS, moved);
        if (kept.isEmpty()) {
            headers.remove(X_DEATH);
        } else {
            headers.put(X_DEATH, kept);
        }
        return headers;
    }

    /** An {@code x-death} (or {@value #EARLIER_DEATHS}) list, newest first; anything else in it is skipped. */
    static List<BrokerDeath> deaths(Object xDeath) {
        List<BrokerDeath> out = new ArrayList<>();
        if (!(xDeath instanceof List<?> list)) {
            return out;
        }
        for (Object item : list) {
            if (item instanceof Map<?, ?> m) {
                Object count = m.get("count");
                Object time = m.get("time");
                List<String> keys = new ArrayList<>();
                if (m.get("routing-keys") instanceof List<?> rk) {
                    rk.forEach(k -> keys.add(String.valueOf(k)));
                }
                out.add(new BrokerDeath(String.valueOf(m.get("queue")), String.valueOf(m.get("reason")),
                        count instanceof Number n ? n.longValue() : 0,
                        time instanceof Date d ? d.toInstant() : null, String.valueOf(m.get("exchange")), keys));
            }
        }
        return out;
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

    /**
     * The copy of a delivery of {@code queue} that waits in retry bucket {@code bucket} for {@code delay}: its history
     * with {@code failed} appended, an expiration of the exact delay (at most the bucket's TTL).
     */
    static AMQP.BasicProperties retryCopy(AMQP.BasicProperties props, String queue, List<AttemptRecord> history,
            AttemptRecord failed, java.time.Duration delay, int bucket) {
        Map<String, Object> headers = copyHeaders(props, queue);
        headers.put(AttemptHistory.HEADER, AttemptHistory.encode(AttemptHistory.append(history, failed)));
        long expiration = Math.max(0, Math.min(delay.toMillis(), bucket * 1000L));
        return copy(props, headers, expiration);
    }

    /**
     * The copy of a delivery of {@code queue} that goes to its hold queue on its way to the dead-letter queue: history
     * with {@code failed} appended, reason, origin queue, when, and a dead-letter id of its own.
     */
    static AMQP.BasicProperties deadLetterCopy(AMQP.BasicProperties props, String queue, List<AttemptRecord> history,
            AttemptRecord failed, String reason, java.time.Instant now) {
        Map<String, Object> headers = copyHeaders(props, queue);
        headers.put(AttemptHistory.HEADER, AttemptHistory.encode(AttemptHistory.append(history, failed)));
        headers.put(REASON, cut(reason, MAX_REASON_LENGTH));
        headers.put(ORIGIN_QUEUE, queue);
        headers.put(DEAD_LETTERED_AT, now.toString());
        headers.put(DEAD_LETTER_ID, java.util.UUID.randomUUID().toString());
        return copy(props, headers, -1);
    }

    /**
     * The copy of a dead letter of {@code queue} that a redrive returns to it: the producer's headers and the deaths as
     * every copy, idemkit's redrive headers (who approved, why, when, the dead letter's reason), no dead-letter or
     * attempt headers: the redriven message starts its attempts again.
     */
    static AMQP.BasicProperties redriveCopy(AMQP.BasicProperties props, String queue, Approval approval) {
        Map<String, Object> headers = copyHeaders(props, queue);
        Optional<String> reason = Optional.ofNullable(props.getHeaders() == null ? null
                : text(props.getHeaders().get(REASON)));
        headers.putAll(DeadLetterHeaders.redrive(approval, reason));
        return copy(props, headers, -1);
    }

    /**
     * The properties of a copy: the allow-list of what crosses (the message id, content type and encoding,
     * correlation id, reply-to, type, app id, priority and timestamp), with {@code headers}, persistent, and an
     * {@code expiration} only when {@code expirationMillis >= 0}. Nothing else crosses: not the producer's
     * {@code user_id} (the broker checks it against the publishing connection's user, and idemkit's is another, so a
     * copy keeping it would be refused every time), its expiration, nor its cluster id.
     */
    static AMQP.BasicProperties copy(AMQP.BasicProperties props, Map<String, Object> headers, long expirationMillis) {
        return new AMQP.BasicProperties.Builder()
                .messageId(props.getMessageId())
                .contentType(props.getContentType())
                .contentEncoding(props.getContentEncoding())
                .correlationId(props.getCorrelationId())
                .replyTo(props.getReplyTo())
                .type(props.getType())
                .appId(props.getAppId())
                .priority(props.getPriority())
                .timestamp(props.getTimestamp())
                .deliveryMode(2)
                .headers(headers)
                .expiration(expirationMillis >= 0 ? Long.toString(expirationMillis) : null)
                .build();
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
