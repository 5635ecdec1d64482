package dev.idemkit.ports.out;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/** An outbox row as an operator sees it: the row, where it stands, and why. */
public record OutboxEntry(OutboxRow row, State state, Optional<Instant> nextAttemptAt, Optional<Instant> sentAt,
        Optional<Instant> parkedAt, Optional<String> parkReason, Optional<String> redrive) {

    /** Where a row stands: waiting, published, parked with a reason, or discarded unpublished by an operator. */
    public enum State { PENDING, SENT, PARKED, DISCARDED }

    public OutboxEntry {
        Objects.requireNonNull(row, "row");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(nextAttemptAt, "nextAttemptAt");
        Objects.requireNonNull(sentAt, "sentAt");
        Objects.requireNonNull(parkedAt, "parkedAt");
        Objects.requireNonNull(parkReason, "parkReason");
        Objects.requireNonNull(redrive, "redrive");
    }
}
