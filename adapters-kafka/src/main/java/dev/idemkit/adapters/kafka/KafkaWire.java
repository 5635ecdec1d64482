package dev.idemkit.adapters.kafka;

import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The header layout of an idemkit record on Kafka.
 *
 * <ul>
 *   <li>{@code message_id} (UTF-8): the idempotency key, the seed's convention;</li>
 *   <li>every other header: the producer's, passed through byte for byte (read as UTF-8 for handlers);</li>
 *   <li>on a retry copy (only ever read from this work topic's own retry topics): {@code x-idemkit-attempts}
 *       (AttemptHistory encoding), {@code x-idemkit-due-at} (epoch millis), and where the record first came from,
 *       {@code x-idemkit-origin-partition} and {@code x-idemkit-origin-offset};</li>
 *   <li>on a dead letter: the domain's DeadLetterHeaders (reason, origin topic, attempts, time) plus the origin
 *       partition and offset.</li>
 * </ul>
 * On a record of the work topic itself every header is the producer's data: a producer cannot skip retries or
 * shorten a delay by writing one of these.
 */
final class KafkaWire {
    static final String MESSAGE_ID = "message_id";
    static final String DUE_AT = "x-idemkit-due-at";
    static final String ORIGIN_PARTITION = "x-idemkit-origin-partition";
    static final String ORIGIN_OFFSET = "x-idemkit-origin-offset";
    /** On a stub dead letter: the record's body (and headers) were too large for the dead-letter topic; where it is. */
    static final String BODY_DROPPED = "x-idemkit-body-dropped";
    /** What a handler does not see as a header of a work-topic record: only the id, which it has as the id. */
    static final Set<String> ID_ONLY = Set.of(MESSAGE_ID);
    /** On a retry copy: the consumer group that wrote it; another group of the same work topic leaves it alone. */
    static final String GROUP = "x-idemkit-group";
    /** idemkit's bookkeeping on a retry copy: never shown to a handler as a header of the message. */
    static final Set<String> RETRY_BOOKKEEPING = Set.of(MESSAGE_ID, AttemptHistory.HEADER, DUE_AT, ORIGIN_PARTITION,
            ORIGIN_OFFSET, GROUP);

    private KafkaWire() {}

    static String text(byte[] value) {
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }

    static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /** The last value of a header as text, or null. */
    static String last(Headers headers, String name) {
        Header h = headers.lastHeader(name);
        return h == null ? null : text(h.value());
    }

    /** Headers as a handler sees them: each name once (the last value), without {@code hidden}. */
    static Map<String, String> visible(Headers headers, Set<String> hidden) {
        Map<String, String> out = new HashMap<>();
        for (Header h : headers) {
            if (!hidden.contains(h.key()) && h.value() != null) {
                out.put(h.key(), text(h.value()));
            }
        }
        return out;
    }

    /** A copy of {@code headers} without {@code dropped}, raw bytes kept. */
    static RecordHeaders copyWithout(Headers headers, Set<String> dropped) {
        RecordHeaders out = new RecordHeaders();
        for (Header h : headers) {
            if (!dropped.contains(h.key())) {
                out.add(h.key(), h.value());
            }
        }
        return out;
    }

    static void put(RecordHeaders headers, String name, String value) {
        headers.remove(name);
        headers.add(name, bytes(value));
    }

    /** Where a record first came from: its own coordinates, or those a trusted retry copy carries. */
    record Origin(int partition, long offset) {}

    static List<AttemptRecord> history(Headers headers) {
        return AttemptHistory.decode(last(headers, AttemptHistory.HEADER));
    }

    static String printable(String raw) {
        if (raw == null) {
            return "-";
        }
        String cut = raw.length() > 80 ? raw.substring(0, 80) + "..." : raw;
        return cut.replaceAll("[^\\x21-\\x7E]", "?");
    }

    /** The dead-letter headers that a redriven copy must not carry, plus the origin coordinates. */
    static final Set<String> DEAD_LETTER_ONLY;

    static {
        java.util.HashSet<String> s = new java.util.HashSet<>(DeadLetterHeaders.DEAD_LETTER);
        s.add(ORIGIN_PARTITION);
        s.add(ORIGIN_OFFSET);
        s.add(DUE_AT);
        s.add(GROUP);
        DEAD_LETTER_ONLY = Set.copyOf(s);
    }
}
