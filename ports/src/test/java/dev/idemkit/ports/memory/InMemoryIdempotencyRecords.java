package dev.idemkit.ports.memory;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The reference Idempotency-Key records. Atomic step: under the store's one lock, "claim when absent
 * or expired, else return the live record". Its clock is its own (given at construction, so a test can
 * move it), as a database's or Redis' would be; renew, complete and release act only on the caller's own
 * claim (same fence), even after its lease lapsed as long as nobody took the key over. Thread-safe.
 */
public final class InMemoryIdempotencyRecords implements IdempotencyRecords {
    private final Object lock = new Object();
    private final Map<ScopedKey, KeyRecord> records = new HashMap<>();
    private final Clock clock;

    public InMemoryIdempotencyRecords() {
        this(Clock.system());
    }

    public InMemoryIdempotencyRecords(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        synchronized (lock) {
            Instant now = clock.now();
            KeyRecord existing = records.get(key);
            if (existing == null || existing.isExpired(now)) {
                KeyRecord.InProgress claim = new KeyRecord.InProgress(fingerprint, now, now.plus(lease), fence);
                records.put(key, claim);
                return new Begin.Claimed(claim);
            }
            return new Begin.Held(existing);
        }
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        synchronized (lock) {
            Instant now = clock.now();
            if (!holds(key, claim, now)) {
                return false;
            }
            KeyRecord.InProgress current = (KeyRecord.InProgress) records.get(key);
            records.put(key, new KeyRecord.InProgress(current.fingerprint(), current.createdAt(), now.plus(lease),
                    current.fence()));
            return true;
        }
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        synchronized (lock) {
            Instant now = clock.now();
            if (!holds(key, claim, now)) {
                return false;
            }
            KeyRecord current = records.get(key);
            records.put(key, new KeyRecord.Completed(current.fingerprint(), response, current.createdAt(), now.plus(ttl)));
            return true;
        }
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        synchronized (lock) {
            if (holds(key, claim, clock.now())) {
                records.remove(key);
            }
        }
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        synchronized (lock) {
            Instant now = clock.now();
            return Optional.ofNullable(records.get(key)).filter(r -> !r.isExpired(now));
        }
    }

    @Override
    public int purgeExpired(int batchSize) {
        synchronized (lock) {
            Instant now = clock.now();
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

    /** The record under {@code key} is {@code claim} itself: its fence decides (a lapsed claim nobody took is still it). */
    private boolean holds(ScopedKey key, KeyRecord.InProgress claim, Instant now) {
        return records.get(key) instanceof KeyRecord.InProgress p && p.sameClaim(claim);
    }
}
