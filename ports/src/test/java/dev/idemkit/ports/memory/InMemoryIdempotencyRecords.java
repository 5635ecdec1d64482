package dev.idemkit.ports.memory;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * The reference Idempotency-Key records. Atomic step: under the store's one lock, "claim when absent
 * or expired, else return the live record". Complete and release act only on the caller's own
 * in-progress record (same fingerprint and creation time). Thread-safe.
 */
public final class InMemoryIdempotencyRecords implements IdempotencyRecords {
    private final Object lock = new Object();
    private final Map<ScopedKey, KeyRecord> records = new HashMap<>();

    @Override
    public Optional<KeyRecord> tryBegin(ScopedKey key, KeyRecord.InProgress running, Instant now) {
        synchronized (lock) {
            KeyRecord existing = records.get(key);
            if (existing == null || existing.isExpired(now)) {
                records.put(key, running);
                return Optional.empty();
            }
            return Optional.of(existing);
        }
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.Completed done) {
        synchronized (lock) {
            if (!holds(records.get(key), done.fingerprint().hex(), done.createdAt())) {
                return false;
            }
            records.put(key, done);
            return true;
        }
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress running) {
        synchronized (lock) {
            if (holds(records.get(key), running.fingerprint().hex(), running.createdAt())) {
                records.remove(key);
            }
        }
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        synchronized (lock) {
            return Optional.ofNullable(records.get(key));
        }
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        synchronized (lock) {
            int purged = 0;
            for (Iterator<KeyRecord> it = records.values().iterator(); it.hasNext() && purged < batchSize; ) {
                if (it.next().isExpired(now)) {
                    it.remove();
                    purged++;
                }
            }
            return purged;
        }
    }

    private static boolean holds(KeyRecord current, String fingerprint, Instant createdAt) {
        return current instanceof KeyRecord.InProgress p && p.fingerprint().hex().equals(fingerprint)
                && p.createdAt().equals(createdAt);
    }
}
