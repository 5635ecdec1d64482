package dev.idemkit.ports.broken;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * BROKEN on purpose: claims with a read, a pause, then a blind write (a GET then a SET without NX).
 * Sequentially right; racing requests of one key all believe they hold the claim.
 */
public final class CheckThenClaimIdempotencyRecords implements IdempotencyRecords {
    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();

    @Override
    public Optional<KeyRecord> tryBegin(ScopedKey key, KeyRecord.InProgress running, Instant now) {
        Optional<KeyRecord> existing = records.find(key);
        if (existing.isPresent() && !existing.get().isExpired(now)) {
            return existing;
        }
        LockSupport.parkNanos(200_000);
        records.tryBegin(key, running, Instant.MAX); // at the end of time every record has expired: a blind write
        return Optional.empty();
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.Completed done) {
        return records.complete(key, done);
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress running) {
        records.release(key, running);
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return records.find(key);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return records.purgeExpired(now, batchSize);
    }
}
