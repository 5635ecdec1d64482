package dev.idemkit.ports.out;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.time.Duration;

/**
 * {@link IdempotencyRecords} whose completion can also apply the writes a request's effect staged in a unit of work of
 * the store's own ({@code U}), in the same atomic step: the effect's writes, the stored response and the end of the
 * claim happen together, only while the claim is still the caller's (same fence), or not at all. An effect that writes
 * only through {@code U} then runs exactly once per key (within the store's durability): a crash before the completion
 * leaves nothing written and the claim to lapse, a crash after it leaves the response to be replayed. Redis does this
 * with one Lua script. Thread-safe; each unit of work belongs to one request.
 *
 * @param <U> the store's unit of work, in which an effect stages its writes
 */
public interface StagedIdempotencyRecords<U extends UnitOfWork> extends IdempotencyRecords {

    /** A fresh unit of work for the effect of the request under {@code key}; nothing staged in it is applied yet. */
    U open(ScopedKey key);

    /** A fresh unit of work for a request that has no key (an optional key left out). */
    U openWithoutKey();

    /**
     * {@link #complete(ScopedKey, KeyRecord.InProgress, StoredResponse, Duration)} that also applies what {@code work}
     * staged, all of it or none, only if the record is still {@code claim}.
     *
     * @return false when the claim was lost: nothing of {@code work} was applied and the response was not stored
     * @throws IllegalStateException when a staged write cannot apply (nothing was written)
     */
    boolean complete(ScopedKey key, KeyRecord.InProgress claim, U work, StoredResponse response, Duration ttl);

    /** Applies what {@code work} staged, all of it or none, for a request without a key. */
    void apply(U work);
}
