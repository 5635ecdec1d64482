package dev.idemkit.ports.broken;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * BROKEN on purpose: claims with a read, a pause, then a blind write (a GET then a SET without NX): a claim
 * that another request made in between is overwritten. Sequentially right; racing requests of one key all
 * believe they hold the claim.
 */
public final class CheckThenClaimIdempotencyRecords implements IdempotencyRecords {
    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        Optional<KeyRecord> existing = records.find(key);
        if (existing.isPresent()) {
            return new Begin.Held(existing.get());
        }
        LockSupport.parkNanos(200_000);
        Begin begun = records.tryBegin(key, fingerprint, fence, lease);
        while (begun instanceof Begin.Held held && held.live() instanceof KeyRecord.InProgress other) {
            records.release(key, other); // the blind write: whoever claimed in between is overwritten
            begun = records.tryBegin(key, fingerprint, fence, lease);
        }
        return begun;
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        return records.renew(key, claim, lease);
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        return records.complete(key, claim, response, ttl);
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        records.release(key, claim);
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return records.find(key);
    }

    @Override
    public int purgeExpired(int batchSize) {
        return records.purgeExpired(batchSize);
    }
}
