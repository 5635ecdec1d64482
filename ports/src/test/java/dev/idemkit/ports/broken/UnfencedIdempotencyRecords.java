package dev.idemkit.ports.broken;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.forwarding.ForwardingIdempotencyRecords;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import java.time.Duration;
import java.util.Optional;

/**
 * BROKEN on purpose: renews, completes and releases whatever in-progress record has the caller's fingerprint,
 * ignoring the fence. A request whose claim lapsed and was taken over by a retry of the same request (same
 * fingerprint) then stores its response over the new holder's claim, or releases it.
 */
public final class UnfencedIdempotencyRecords extends ForwardingIdempotencyRecords {
    public UnfencedIdempotencyRecords() {
        super(new InMemoryIdempotencyRecords());
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        return current(key, claim).map(c -> delegate().renew(key, c, lease)).orElse(false);
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        return current(key, claim).map(c -> delegate().complete(key, c, response, ttl)).orElse(false);
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        current(key, claim).ifPresent(c -> delegate().release(key, c));
    }

    /** The live claim with the caller's fingerprint, whoever holds it. */
    private Optional<KeyRecord.InProgress> current(ScopedKey key, KeyRecord.InProgress claim) {
        return delegate().find(key).filter(KeyRecord.InProgress.class::isInstance).map(KeyRecord.InProgress.class::cast)
                .filter(p -> p.fingerprint().equals(claim.fingerprint()));
    }
}
