package dev.idemkit.ports.out;

import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A committed outbox message as the store holds it: its message id, its position ({@code seq}, the commit order within
 * its ordering key), the message, when it was appended, which attempt its next publish is (counting from 1 again
 * after a redrive) and every failed publish so far.
 */
public record OutboxRow(String id, long seq, OutboxMessage message, Instant appendedAt, int attempt,
        List<AttemptRecord> failures) {
    public OutboxRow {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempts count from 1, got " + attempt);
        }
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(appendedAt, "appendedAt");
        failures = List.copyOf(failures);
    }

    /** The message as a transport publishes it: the row's id as message id, the ordering key as group. */
    public OutgoingMessage outgoing() {
        return new OutgoingMessage(id, message.body(), message.headers(), java.util.Optional.of(message.orderingKey()),
                java.util.Optional.of(id));
    }

    /** Header lookup without copying the body. */
    public Map<String, String> headers() {
        return message.headers();
    }
}
