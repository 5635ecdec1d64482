package dev.idemkit.ports.service;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Completed Idempotency-Key responses kept in this process, so that a replay need not reach the store. Only a
 * COMPLETED record is ever held (it is immutable until it expires), never an in-progress one; the store stays the
 * truth, and a miss reads it.
 *
 * <p>An entry lives at most {@code lifetime} on this process's clock (default 60 s, far below the records' TTL of
 * 24 h): the only answer it can give that the store would not is, within that lifetime after the record expired in
 * the store, the old response instead of a new execution. Bounded to {@code maxEntries} (least recently used out) and
 * to responses of at most {@link #MAX_BODY_BYTES}. Thread-safe.
 */
public final class ReplayCache {
    /** Responses bigger than this are not cached. */
    public static final int MAX_BODY_BYTES = 16 * 1024;

    /** What the cache holds for a key: the request's fingerprint and its response. */
    public record Entry(Fingerprint fingerprint, StoredResponse response) {}

    private record Timed(Entry entry, long until) {}

    private final int maxEntries;
    private final long lifetimeNanos;
    private final LongSupplier nanoTime;
    private final Map<ScopedKey, Timed> entries;

    /** @param nanoTime this process's monotonic clock ({@code System::nanoTime}; a test's) */
    public ReplayCache(int maxEntries, Duration lifetime, LongSupplier nanoTime) {
        if (maxEntries < 0 || lifetime.isNegative()) {
            throw new IllegalArgumentException("maxEntries and lifetime must not be negative");
        }
        this.maxEntries = maxEntries;
        this.lifetimeNanos = lifetime.toNanos();
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<ScopedKey, Timed> eldest) {
                return size() > ReplayCache.this.maxEntries;
            }
        };
    }

    /** 10,000 responses for 60 s each. */
    public static ReplayCache defaults() {
        return new ReplayCache(10_000, Duration.ofSeconds(60), System::nanoTime);
    }

    /** Keeps nothing: every replay reads the store. */
    public static ReplayCache none() {
        return new ReplayCache(0, Duration.ZERO, System::nanoTime);
    }

    /** The completed response for {@code key}, if this process saw it complete within the lifetime. */
    public synchronized Optional<Entry> get(ScopedKey key) {
        Timed t = entries.get(key);
        if (t == null) {
            return Optional.empty();
        }
        if (nanoTime.getAsLong() - t.until() >= 0) {
            entries.remove(key);
            return Optional.empty();
        }
        return Optional.of(t.entry());
    }

    /** Remembers a COMPLETED response (stored in the store, not a 5xx); the caller never passes anything else. */
    public synchronized void putCompleted(ScopedKey key, Fingerprint fingerprint, StoredResponse response) {
        if (maxEntries == 0 || lifetimeNanos == 0 || response.isServerError()
                || response.body().length > MAX_BODY_BYTES) {
            return;
        }
        entries.put(key, new Timed(new Entry(fingerprint, response), nanoTime.getAsLong() + lifetimeNanos));
    }

    synchronized int size() {
        return entries.size();
    }
}
