package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.ports.out.DeadLetterEntry;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * Reads a DLQ message back into a {@link DeadLetter}. What a producer wrote is data, not an instruction:
 * the origin queue is always the work queue whose DLQ is read, never an attribute. Messages that SQS
 * moved by itself (the native redrive policy; SQS marks them with {@code DeadLetterQueueSourceArn}) keep
 * whatever {@code x-idemkit-*} attributes their producer set, so none of those is taken: their reason says
 * they were moved, their attempts are unknown (empty) and their dead-letter time is the send time.
 */
final class SqsDeadLetters {
    static final String NATIVE_REASON = "moved by the queue's SQS redrive policy (maxReceiveCount reached);"
            + " no handler decided it";

    private SqsDeadLetters() {}

    static DeadLetterEntry entry(String queue, Message m) {
        Map<String, MessageAttributeValue> a = m.messageAttributes();
        boolean ours = !m.attributes().containsKey(MessageSystemAttributeName.DEAD_LETTER_QUEUE_SOURCE_ARN);
        Map<String, String> headers;
        try {
            headers = Map.copyOf(SqsWire.headers(a));
        } catch (RuntimeException unreadable) {
            headers = Map.of(); // one dead letter's odd attributes never break the listing of the others
        }
        dev.idemkit.domain.Message original = new dev.idemkit.domain.Message(SqsWire.string(a, SqsWire.MESSAGE_ID),
                SqsWire.receive(m.body(), a).bytes(), headers, queue);
        String reason = ours ? reason(a).orElse(null) : null;
        return new DeadLetterEntry(m.messageId(), new DeadLetter(original,
                reason == null || reason.isBlank() ? NATIVE_REASON : reason, ours ? attempts(a) : List.of(),
                deadLetteredAt(m, ours)));
    }

    /**
     * idemkit's dead-letter reason, under the attribute name before 2026-12-02 or today's. The old name first: it was
     * always reserved, so only idemkit wrote it, while today's name was then an ordinary header a producer could set.
     */
    static java.util.Optional<String> reason(Map<String, MessageAttributeValue> a) {
        String r = SqsWire.string(a, SqsWire.LEGACY_REASON);
        if (r == null) {
            r = SqsWire.string(a, SqsWire.REASON);
        }
        return java.util.Optional.ofNullable(r).filter(s -> !s.isBlank());
    }

    private static List<AttemptRecord> attempts(Map<String, MessageAttributeValue> a) {
        try {
            return AttemptHistory.decode(SqsWire.string(a, SqsWire.ATTEMPTS));
        } catch (IllegalArgumentException unreadable) {
            return List.of();
        }
    }

    private static Instant deadLetteredAt(Message m, boolean ours) {
        String at = ours ? SqsWire.string(m.messageAttributes(), SqsWire.DEAD_LETTERED_AT) : null;
        if (at != null) {
            try {
                return Instant.parse(at);
            } catch (DateTimeParseException ignored) {
                // falls back to the send time
            }
        }
        String sent = m.attributes().get(MessageSystemAttributeName.SENT_TIMESTAMP);
        try {
            return sent == null ? Instant.EPOCH : Instant.ofEpochMilli(Long.parseLong(sent));
        } catch (NumberFormatException e) {
            return Instant.EPOCH;
        }
    }
}
