package dev.idemkit.adapters.redis;

import static dev.idemkit.adapters.redis.RecordCodec.nanos;
import static dev.idemkit.adapters.redis.RecordCodec.seconds;
import static dev.idemkit.adapters.redis.RecordCodec.text;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.ByteArrayCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Idempotency-Key records on Redis, one hash per (client, key) under
 * {@code <prefix>:idem:{<b64 client>.<b64 key>}}: base64url-encoded parts, so no crafted key reaches another
 * client's record. Atomic step: the begin script ({@link RecordScripts#BEGIN}), which claims a key that is absent
 * or expired at the caller's {@code now} and otherwise returns the live record. Completion and release are
 * compare-and-set scripts on the in-progress record (fingerprint and creation time). Status, headers and body are
 * stored as bytes ({@code ByteArrayCodec}) and replayed byte for byte. Each record carries a Redis TTL of its
 * lifetime plus one minute, so Redis removes dead records by itself; {@link #purgeExpired} exists for the port
 * and removes what is expired but not yet evicted. Thread-safe.
 */
public final class RedisIdempotencyRecords implements IdempotencyRecords {
    private static final Logger LOG = LoggerFactory.getLogger(RedisIdempotencyRecords.class);
    /** Keeps an expired record visible to find() and purge for a while after its expiry. */
    static final Duration GRACE = Duration.ofMinutes(1);

    private final RedissonClient client;
    private final RScript script;
    private final KeyLayout layout;

    public RedisIdempotencyRecords(RedissonClient client, RedisSettings settings) {
        this.client = Objects.requireNonNull(client, "client");
        this.script = client.getScript(ByteArrayCodec.INSTANCE);
        this.layout = new KeyLayout(settings.keyPrefix(), settings.hashTagScope());
    }

    @Override
    public Optional<KeyRecord> tryBegin(ScopedKey key, KeyRecord.InProgress running, Instant now) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(running, "running");
        Objects.requireNonNull(now, "now");
        String k = layout.record(key);
        List<?> reply = Failures.call("claim an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.BEGIN, RScript.ReturnType.LIST, List.of(k), seconds(now), nanos(now),
                text(running.fingerprint().hex()), seconds(running.createdAt()), nanos(running.createdAt()),
                seconds(running.expiresAt()), nanos(running.expiresAt()), ttl(now, running.expiresAt())));
        Optional<KeyRecord> live = RecordCodec.decode(reply);
        LOG.debug("idempotency-key decision={} client={}", live.isEmpty() ? "claimed" : "held", key.client());
        return live;
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.Completed done) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(done, "done");
        String k = layout.record(key);
        Long stored = Failures.call("complete an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.COMPLETE, RScript.ReturnType.LONG, List.of(k), text(done.fingerprint().hex()),
                seconds(done.createdAt()), nanos(done.createdAt()), text(Integer.toString(done.response().status())),
                RecordCodec.headers(done.response().headers()), done.response().body(), seconds(done.expiresAt()),
                nanos(done.expiresAt()), ttl(done.createdAt(), done.expiresAt())));
        LOG.debug("idempotency-key decision={} client={}", stored == 1L ? "completed" : "claim-lost", key.client());
        return stored == 1L;
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress running) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(running, "running");
        String k = layout.record(key);
        Failures.call("release an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.RELEASE, RScript.ReturnType.LONG, List.of(k), text(running.fingerprint().hex()),
                seconds(running.createdAt()), nanos(running.createdAt())));
        LOG.debug("idempotency-key decision=released client={}", key.client());
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        String k = layout.record(Objects.requireNonNull(key, "key"));
        List<?> reply = Failures.call("read an idempotency key", () -> script.eval(k, RScript.Mode.READ_ONLY,
                "return redis.call('HGETALL', KEYS[1])", RScript.ReturnType.LIST, List.of(k)));
        return RecordCodec.decode(reply);
    }

    /**
     * Scans this prefix's record keys and deletes, each by a compare-and-delete script, those expired at
     * {@code now}, up to {@code batchSize}. Redis' own TTL removes records a minute after their expiry anyway.
     */
    @Override
    public int purgeExpired(Instant now, int batchSize) {
        Objects.requireNonNull(now, "now");
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be at least 1, got " + batchSize);
        }
        return Failures.call("purge idempotency keys", () -> {
            int removed = 0;
            Iterator<String> keys = client.getKeys().getKeysByPattern(layout.recordPattern(), 500).iterator();
            while (removed < batchSize && keys.hasNext()) {
                String k = keys.next();
                Long deleted = script.eval(k, RScript.Mode.READ_WRITE, RecordScripts.PURGE, RScript.ReturnType.LONG,
                        List.of(k), seconds(now), nanos(now));
                removed += deleted.intValue();
            }
            LOG.debug("idempotency-key decision=purged count={}", removed);
            return removed;
        });
    }

    private static byte[] ttl(Instant from, Instant to) {
        long millis = Math.max(1, Duration.between(from, to).toMillis()) + GRACE.toMillis();
        return text(Long.toString(millis));
    }
}
