package dev.idemkit.ports.out;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Stored Idempotency-Key records, always addressed by client and key together, so that no client can
 * reach another's records. Thread-safe.
 *
 * <p>Time is the store's: every expiry (a claim's lease, a completed response's TTL) is decided on the
 * store's own clock (the database's, Redis' server time), never on a caller's, so two callers whose
 * clocks differ can never both believe they hold one key. A claim carries a fence, a token unique to
 * it: renewing, completing and releasing act only on the very claim whose fence they name, so a request
 * whose claim lapsed and was taken over can neither answer for the key nor remove its new holder.
 */
public interface IdempotencyRecords {

    /** What {@link #tryBegin} found. */
    sealed interface Begin {
        /** This caller now holds the key under {@code claim} (times on the store's clock) and must execute. */
        record Claimed(KeyRecord.InProgress claim) implements Begin {
            public Claimed {
                Objects.requireNonNull(claim, "claim");
            }
        }

        /** Another request's live record: for {@code KeyMachine.decideLive}. */
        record Held(KeyRecord live) implements Begin {
            public Held {
                Objects.requireNonNull(live, "live");
            }
        }
    }

    /**
     * Atomically claims {@code key} for a request with {@code fingerprint} under {@code fence}, live for
     * {@code lease} from the store's now, when no live record exists (absent, or expired on the store's clock).
     *
     * @return the claim, or the live record that another request holds (in progress or completed)
     */
    Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease);

    /**
     * Keeps a running request's claim alive: its lease runs {@code lease} from the store's now again, only if the
     * record is still {@code claim} (same fence).
     *
     * @return false when the claim was lost (it lapsed, and another request may have taken the key)
     */
    boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease);

    /**
     * Replaces the in-progress record with its final response, kept for {@code ttl} from the store's now, only if
     * the record is still {@code claim} (same fence).
     *
     * @return false when the claim was lost; the response was not stored
     */
    boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl);

    /**
     * Removes the in-progress record (after a 5xx or a crash of the handler) so that a retry can execute, only if
     * it is still {@code claim} (same fence): a caller whose claim lapsed never removes the new holder's claim, nor
     * a completed record.
     */
    void release(ScopedKey key, KeyRecord.InProgress claim);

    /** The live record under {@code key}; empty when there is none or it expired on the store's clock. */
    Optional<KeyRecord> find(ScopedKey key);

    /** Deletes up to {@code batchSize} records expired on the store's clock; returns how many. */
    int purgeExpired(int batchSize);
}
