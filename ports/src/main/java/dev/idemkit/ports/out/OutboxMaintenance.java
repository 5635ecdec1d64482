package dev.idemkit.ports.out;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** The outbox's counts for metrics and health, and its retention. Thread-safe. */
public interface OutboxMaintenance {

    /** Counts for metrics and health. */
    record Stats(long pending, long parked, Optional<Duration> oldestPendingAge) {}

    Stats stats(Instant now);

    /**
     * Deletes sent rows whose send is older than {@code before}, at most {@code batch} per transaction and
     * {@code maxBatches} transactions; never an unsent row.
     *
     * @return how many rows were deleted
     */
    long purgeSent(Instant before, int batch, int maxBatches);
}
