package dev.idemkit.adapters.redis;

import static dev.idemkit.adapters.redis.RecordCodec.text;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
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
 * client's record. Atomic step: the begin script ({@link RecordScripts#BEGIN}), which claims a key that has no record
 * and otherwise returns the record there. Time is Redis' alone: the key's TTL is the claim's lease (renewed by
 * {@link #renew}) or the completed response's TTL, set from Redis' {@code TIME}, so a record exists exactly while it is
 * live and no caller's clock decides an expiry. Renewal, completion and release are compare-and-set scripts on the
 * claim's fence. Status, headers and body are stored as bytes ({@code ByteArrayCodec}) and replayed byte for byte.
 * {@link #purgeExpired} has nothing to do: Redis removes a record when its TTL runs out. Thread-safe.
 */
public final class RedisIdempotencyRecords implements IdempotencyRecords {
    private static final Logger LOG = LoggerFactory.getLogger(RedisIdempotencyRecords.class);

    private final RScript script;
    private final KeyLayout layout;

    public RedisIdempotencyRecords(RedissonClient client, RedisSettings settings) {
        Objects.requireNonNull(client, "client");
        this.script = client.getScript(ByteArrayCodec.INSTANCE);
        this.layout = new KeyLayout(settings.keyPrefix(), settings.hashTagScope());
    }

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        String validFence = new KeyRecord.InProgress(fingerprint, Instant.EPOCH, Instant.EPOCH, fence).fence();
        String k = layout.record(key);
        List<?> reply = Failures.call("claim an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.BEGIN, RScript.ReturnType.LIST, List.of(k), text(fingerprint.hex()), text(validFence),
                millis(lease)));
        boolean claimed = "claimed".equals(new String((byte[]) reply.get(0), StandardCharsets.UTF_8));
        KeyRecord record = RecordCodec.decode(reply, 1).orElseThrow(() ->
                new IllegalStateException("the begin script answered without a record"));
        LOG.debug("idempotency-key decision={} client={}", claimed ? "claimed" : "held", key.client());
        return claimed ? new Begin.Claimed((KeyRecord.InProgress) record) : new Begin.Held(record);
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        String k = layout.record(Objects.requireNonNull(key, "key"));
        Long renewed = Failures.call("renew an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.RENEW, RScript.ReturnType.LONG, List.of(k), text(claim.fence()), millis(lease)));
        LOG.debug("idempotency-key decision={} client={}", renewed == 1L ? "renewed" : "claim-lost", key.client());
        return renewed == 1L;
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(response, "response");
        String k = layout.record(key);
        Long stored = Failures.call("complete an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.COMPLETE, RScript.ReturnType.LONG, List.of(k), text(claim.fence()),
                text(Integer.toString(response.status())), RecordCodec.headers(response.headers()), response.body(),
                millis(ttl)));
        LOG.debug("idempotency-key decision={} client={}", stored == 1L ? "completed" : "claim-lost", key.client());
        return stored == 1L;
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        String k = layout.record(Objects.requireNonNull(key, "key"));
        Failures.call("release an idempotency key", () -> script.eval(k, RScript.Mode.READ_WRITE,
                RecordScripts.RELEASE, RScript.ReturnType.LONG, List.of(k), text(claim.fence())));
        LOG.debug("idempotency-key decision=released client={}", key.client());
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        String k = layout.record(Objects.requireNonNull(key, "key"));
        List<?> reply = Failures.call("read an idempotency key", () -> script.eval(k, RScript.Mode.READ_ONLY,
                "return redis.call('HGETALL', KEYS[1])", RScript.ReturnType.LIST, List.of(k)));
        return RecordCodec.decode(reply);
    }

    /** Nothing to purge: a record's key expires by its TTL, on Redis' clock. */
    @Override
    public int purgeExpired(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be at least 1, got " + batchSize);
        }
        return 0;
    }

    private static byte[] millis(Duration d) {
        return text(Long.toString(Math.max(1, d.toMillis())));
    }
}
