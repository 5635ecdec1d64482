package dev.idemkit.ports.out;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A store's atomic step of the Idempotency-Key flow, the way {@link InboxStore#runOnce} is the inbox's: one attempt
 * claims the (client, key) record and, when it is this request's, runs the request's effect in the claim's unit of
 * work and stores the response with the key. The flow around it (parse the key, decide on what holds it, wait, give
 * up, replay) is written once, in {@code IdempotentRequestService}, for every store.
 *
 * <p>A store that can hold the claim uncommitted while the effect runs (PostgreSQL) commits key, effect and response
 * together and rolls all of them back on a 5xx or an exception. A store that cannot ({@link NoTransaction}, built on
 * {@link IdempotencyRecords} by {@code LeasedClaims}) claims under a lease that it renews while the effect runs,
 * then stores the response, and releases the key on a 5xx or an exception. Thread-safe.
 *
 * @param <U> the unit of work the effect runs in
 */
public interface IdempotencyClaims<U extends UnitOfWork> {

    /** What one attempt found or did. */
    sealed interface Attempt {
        /** This request held the key and ran: its response, stored with the key (a 5xx was not: the key is free). */
        record Ran(StoredResponse response) implements Attempt {
            public Ran {
                Objects.requireNonNull(response, "response");
            }
        }

        /**
         * This request ran, but its claim was lost meanwhile (it outlived its lease and another request may hold the
         * key): its response was not stored, and it must not answer for the key.
         */
        record RanButLost(StoredResponse response) implements Attempt {
            public RanButLost {
                Objects.requireNonNull(response, "response");
            }
        }

        /** Another request's live record (in progress or completed): for {@code KeyMachine.decideLive}. */
        record Held(KeyRecord live) implements Attempt {
            public Held {
                Objects.requireNonNull(live, "live");
            }
        }

        /** Another request held the key's record locked for longer than this attempt could wait. */
        record Busy() implements Attempt {}

        /** The record changed under the attempt (it expired or was released meanwhile): try again at once. */
        record Again() implements Attempt {}
    }

    /**
     * One attempt at {@code key} for a request with {@code fingerprint}, waiting at most {@code wait} where the store
     * itself waits for another claim (a row lock); {@code policy} gives the lease and the response's TTL.
     *
     * @throws EffectFailedException (or the effect's own unchecked exception) when the effect threw; the key is free
     *     (where it could not be released, it lapses after its lease)
     * @throws StoreUnavailableException when the store failed; nothing was stored
     */
    Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
            Effect<? super U, StoredResponse> effect);

    /** Runs a request that has no key (an optional key left out) in a unit of work of its own; a 5xx rolls it back. */
    StoredResponse runWithoutKey(Effect<? super U, StoredResponse> effect);

    /** The live record under {@code key}, read without taking it; empty when there is none or it expired. */
    Optional<KeyRecord> find(ScopedKey key);
}
