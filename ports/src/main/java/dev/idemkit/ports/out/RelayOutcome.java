package dev.idemkit.ports.out;

import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Instant;
import java.util.Objects;

/** What the relay did with one outbox row; the store records it in the same transaction that handed the row out. */
public sealed interface RelayOutcome {

    /** The broker confirmed it: never handed out again. */
    record Sent(Instant at) implements RelayOutcome {
        public Sent {
            Objects.requireNonNull(at, "at");
        }
    }

    /** The publish failed: hand it out again from {@code retryAt}, with {@code failed} added to its history. */
    record Failed(AttemptRecord failed, Instant retryAt) implements RelayOutcome {
        public Failed {
            Objects.requireNonNull(failed, "failed");
            Objects.requireNonNull(retryAt, "retryAt");
        }
    }

    /**
     * Given up: parked with {@code reason} until an operator redrives it. A parked row keeps blocking its ordering key
     * (the messages after it wait), so that order is never broken silently.
     */
    record Parked(AttemptRecord failed, String reason) implements RelayOutcome {
        public Parked {
            Objects.requireNonNull(failed, "failed");
            if (reason == null || reason.isBlank()) {
                throw new IllegalArgumentException("a parked outbox row needs a reason");
            }
        }
    }
}
