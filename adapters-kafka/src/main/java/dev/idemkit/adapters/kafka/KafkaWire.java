package dev.idemkit.adapters.kafka;

import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
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
 *   <li>every other header of a record a producer wrote: the producer's (read as UTF-8 for handlers); on a copy
 *       idemkit writes, the producer's headers travel under {@code x-idemkit-app.} ({@link #copyHeaders}, the one
 *       allow-list of what crosses), so that none of them is ever read as one of idemkit's;</li>
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

    /**
     * Headers as a handler sees them: each name once (the last value), without {@code hidden}; on a copy idemkit
     * wrote (marked {@value #COPY}), the producer's headers are those under {@value #APPLICATION_PREFIX}, with
     * idemkit's own (a redrive's approval) over them.
     */
    static Map<String, String> visible(Headers headers, Set<String> hidden) {
        Map<String, String> out = new HashMap<>();
        boolean copy = headers.lastHeader(COPY) != null;
        for (Header h : headers) {
            if (copy && h.key().startsWith(APPLICATION_PREFIX) && h.value() != null) {
                out.put(h.key().substring(APPLICATION_PREFIX.length()), text(h.value()));
            }
        }
        for (Header h : headers) {
            if (!hidden.contains(h.key()) && !h.key().equals(COPY) && !(copy && h.key().startsWith(APPLICATION_PREFIX))
                    && h.value() != null) {
                out.put(h.key(), text(h.value()));
            }
        }
        return out;
    }

    /**
     * On a copy idemkit writes (a retry, a dead letter, a redrive): each of the producer's headers under this prefix,
     * bytes, order and repeats kept, so that nothing a producer wrote is ever read as one of idemkit's headers (a
     * producer's {@code x-idemkit-body-dropped} would make its dead letter a stub that cannot be redriven).
     */
    static final String APPLICATION_PREFIX = "x-idemkit-app.";

    /** On every copy idemkit writes: marks it as one, so that its producer's headers are those under the prefix. */
    static final String COPY = "x-idemkit-copy";

    /**
     * The one allow-list of what crosses from a received record into a copy idemkit writes: its key, value and the
     * producer's headers, each under {@value #APPLICATION_PREFIX}, and the {@value #COPY} mark. The copy then writes
     * idemkit's own headers (the message id, attempts, due time, origin, group, dead-letter or redrive headers);
     * nothing else crosses. The producer's headers of a record are those under the prefix when it carries the mark
     * (a copy idemkit wrote), else every header but the message id and idemkit's own {@code x-idemkit-} names (a
     * producer's record, or a copy written before copies were marked); so copying a copy changes nothing.
     */
    static RecordHeaders copyHeaders(Headers received) {
        RecordHeaders out = new RecordHeaders();
        boolean copy = received.lastHeader(COPY) != null;
        for (Header h : received) {
            String name = h.key();
            if (copy ? name.startsWith(APPLICATION_PREFIX)
                    : !name.equals(MESSAGE_ID) && !name.startsWith("x-idemkit-")) {
                out.add(copy ? name : APPLICATION_PREFIX + name, h.value());
            }
        }
        out.add(COPY, bytes("1"));
        return out;
    }

    /**
     * The headers its producer wrote, as the record carried them on the work topic: on a copy idemkit wrote, those
     * under {@value #APPLICATION_PREFIX} (prefix removed) and the message id; on a producer's record, all of them.
     */
    static RecordHeaders producerHeaders(Headers received) {
        RecordHeaders out = new RecordHeaders();
        if (received.lastHeader(COPY) == null) {
            received.forEach(out::add);
            return out;
        }
        for (Header h : received) {
            if (h.key().startsWith(APPLICATION_PREFIX)) {
                out.add(h.key().substring(APPLICATION_PREFIX.length()), h.value());
            }
        }
        Header id = received.lastHeader(MESSAGE_ID);
        if (id != null) {
            out.add(MESSAGE_ID, id.value());
        }
        return out;
    }

    /** Whether idemkit wrote this record as a copy (a retry, a dead letter, a redrive). */
    static boolean isCopy(Headers headers) {
        return headers.lastHeader(COPY) != null;
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
}
