package dev.idemkit.ports.out;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import java.time.Instant;
import java.util.Optional;

/**
 * Stored Idempotency-Key records, always addressed by client and key together, so that no client can
 * reach another's records. Thread-safe.
 */
public interface IdempotencyRecords {

    /**
     * Atomically claims {@code key}: stores {@code running} when no live record exists (absent, or
     * expired at {@code now}).
     *
     * @return empty when this caller now holds the claim and must execute; otherwise the live record that
     *     another request holds (in progress or completed), for {@code KeyMachine.decide}
     */
    Optional<KeyRecord> tryBegin(ScopedKey key, KeyRecord.InProgress running, Instant now);

    /**
     * Replaces the in-progress record with its completed response, only if the record is still the
     * in-progress one with the same fingerprint and creation time.
     *
     * @return false when the claim was lost (expired and taken over); the response was not stored
     */
    boolean complete(ScopedKey key, KeyRecord.Completed done);

    /**
     * Removes the in-progress record (after a 5xx or a crash of the handler) so that a retry can execute,
     * only if the record is still {@code running} (same fingerprint and creation time): a caller whose
     * claim expired and was taken over never removes the new holder's claim, nor a completed record.
     */
    void release(ScopedKey key, KeyRecord.InProgress running);

    /** The record under {@code key}, live or expired; empty when there is none. */
    Optional<KeyRecord> find(ScopedKey key);

    /** Deletes up to {@code batchSize} records expired at {@code now}; returns how many. */
    int purgeExpired(Instant now, int batchSize);
}
