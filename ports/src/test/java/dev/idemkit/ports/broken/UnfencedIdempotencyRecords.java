package dev.idemkit.ports.broken;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.util.Optional;

/**
 * BROKEN on purpose: renews, completes and releases whatever in-progress record has the caller's fingerprint,
 * ignoring the fence. A request whose claim lapsed and was taken over by a retry of the same request (same
 * fingerprint) then stores its response over the new holder's claim, or releases it.
 */
public final class UnfencedIdempotencyRecords implements IdempotencyRecords {
    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        return records.tryBegin(key, fingerprint, fence, lease);
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        return current(key, claim).map(c -> records.renew(key, c, lease)).orElse(false);
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        return current(key, claim).map(c -> records.complete(key, c, response, ttl)).orElse(false);
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        current(key, claim).ifPresent(c -> records.release(key, c));
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return records.find(key);
    }

    @Override
    public int purgeExpired(int batchSize) {
        return records.purgeExpired(batchSize);
    }

    /** The live claim with the caller's fingerprint, whoever holds it. */
    private Optional<KeyRecord.InProgress> current(ScopedKey key, KeyRecord.InProgress claim) {
        return records.find(key).filter(KeyRecord.InProgress.class::isInstance).map(KeyRecord.InProgress.class::cast)
                .filter(p -> p.fingerprint().equals(claim.fingerprint()));
    }
}
