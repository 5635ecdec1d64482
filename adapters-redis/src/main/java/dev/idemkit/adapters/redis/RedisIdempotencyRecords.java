package dev.idemkit.adapters.redis;

import static dev.idemkit.adapters.redis.RecordCodec.text;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.StagedIdempotencyRecords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
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
 * {@link #purgeExpired} has nothing to do: Redis removes a record when its TTL runs out.
 *
 * <p>An effect may stage its writes in a {@link RedisUnitOfWork} ({@link #open}); {@link #complete(ScopedKey,
 * KeyRecord.InProgress, RedisUnitOfWork, StoredResponse, Duration)} applies them, stores the response and ends the
 * claim in one script ({@link RecordScripts#COMPLETE_STAGED}), only while the claim's fence is there: such an effect
 * runs exactly once per key, within Redis' durability. Thread-safe.
 */
public final class RedisIdempotencyRecords implements StagedIdempotencyRecords<RedisUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(RedisIdempotencyRecords.class);

    private final RScript script;
    private final KeyLayout layout;
    private final boolean cluster;

    public RedisIdempotencyRecords(RedissonClient client, RedisSettings settings) {
        Objects.requireNonNull(client, "client");
        this.script = client.getScript(ByteArrayCodec.INSTANCE);
        this.layout = new KeyLayout(settings.keyPrefix(), settings.hashTagScope());
        this.cluster = settings.topology() == RedisSettings.Topology.CLUSTER;
    }

    /** A unit of work in the record's slot: on a cluster its keys must carry {@link RedisUnitOfWork#hashTag()}. */
    @Override
    public RedisUnitOfWork open(ScopedKey key) {
        return new RedisUnitOfWork(layout, layout.record(Objects.requireNonNull(key, "key")), cluster);
    }

    /** A unit of work in a slot of its own (on a cluster, its keys must carry {@link RedisUnitOfWork#hashTag()}). */
    @Override
    public RedisUnitOfWork openWithoutKey() {
        return new RedisUnitOfWork(layout, layout.data("{" + UUID.randomUUID() + "}", "request"), cluster);
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, RedisUnitOfWork work, StoredResponse response,
            Duration ttl) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(response, "response");
        work.close();
        List<RedisUnitOfWork.Staged> staged = work.staged();
        String k = layout.record(key);
        List<Object> keys = new ArrayList<>(staged.size() + 1);
        keys.add(k);
        List<Object> args = new ArrayList<>(List.of(text(claim.fence()), text(Integer.toString(response.status())),
                RecordCodec.headers(response.headers()), response.body(), millis(ttl),
                text(Integer.toString(staged.size()))));
        addStaged(staged, keys, args);
        String verdict = verdict(Failures.call("complete an idempotency key", () -> script.eval(k,
                RScript.Mode.READ_WRITE, RecordScripts.COMPLETE_STAGED, RScript.ReturnType.VALUE, keys,
                args.toArray())));
        LOG.debug("idempotency-key decision={} client={} writes={}", verdict, key.client(), staged.size());
        if (verdict.equals("OK")) {
            return true;
        }
        if (verdict.equals("LOST")) {
            return false;
        }
        throw refused("the request's writes and its Idempotency-Key record of client " + key.client().value(), verdict,
                staged);
    }

    /** How long the mark of an applied unit without a key stays: longer than any resend of its script. */
    static final Duration APPLIED_MARK = Duration.ofMinutes(10);

    @Override
    public void apply(RedisUnitOfWork work) {
        work.close();
        List<RedisUnitOfWork.Staged> staged = work.staged();
        if (staged.isEmpty()) {
            return;
        }
        String mark = work.key(APPLIED_MARK_NAME);
        List<Object> keys = new ArrayList<>(staged.size() + 1);
        keys.add(mark);
        List<Object> args = new ArrayList<>();
        args.add(millis(APPLIED_MARK));
        args.add(text(Integer.toString(staged.size())));
        addStaged(staged, keys, args);
        String verdict = verdict(Failures.call("apply a request's writes", () -> script.eval(mark,
                RScript.Mode.READ_WRITE, RecordScripts.APPLY, RScript.ReturnType.VALUE, keys, args.toArray())));
        if (!verdict.equals("OK") && !verdict.equals("APPLIED")) {
            throw refused("the writes of a request without a key", verdict, staged);
        }
    }

    /** The data key, in the unit's own slot, that marks a keyless unit applied (so a resent script applies nothing). */
    static final String APPLIED_MARK_NAME = "idemkit-applied";

    private static void addStaged(List<RedisUnitOfWork.Staged> staged, List<Object> keys, List<Object> args) {
        for (RedisUnitOfWork.Staged w : staged) {
            keys.add(w.key());
            args.add(text(w.op()));
            args.add(text(w.a()));
            args.add(text(w.b()));
        }
    }

    private static String verdict(Object reply) {
        return reply instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(reply);
    }

    /**
     * A staged write that could not apply: names the write, never its value. The server's refusal (out of memory, too
     * few replicas, read-only) is a StoreUnavailableException, retryable (a 503 at the payments API); a write that
     * cannot apply to the data there (a wrong type, a counter that is no integer) or a unit applied in part is an
     * IllegalStateException (a 500): retrying will not help, and in part needs an operator.
     */
    private static RuntimeException refused(String what, String verdict, List<RedisUnitOfWork.Staged> staged) {
        boolean held = verdict.endsWith(" HELD");
        String[] parts = verdict.split(" ", 3);
        String which = "";
        if (parts.length > 1 && parts[1].matches("\\d+")) {
            int i = Integer.parseInt(parts[1]);
            which = i <= staged.size() ? " (write " + i + ": " + staged.get(i - 1).op() + " " + staged.get(i - 1).key()
                    + ")" : " (the completion of the record)";
        }
        if (verdict.startsWith("PARTIAL")) {
            return new IllegalStateException(what + " were applied only in part" + which + ": " + verdict + ". The"
                    + " record stays in progress for good under a fence no request holds, so no retry runs the request"
                    + " again; an operator must inspect the writes and delete the record");
        }
        String claim = held ? "; the server refused to release the claim too: it lapses after its lease" : "";
        if (verdict.startsWith("REFUSED")) {
            return new dev.idemkit.ports.out.StoreUnavailableException(what + ": Redis refused the writes" + which + ": "
                    + verdict + "; nothing was written" + claim, null);
        }
        return new IllegalStateException(what + " could not be applied" + which + ": " + verdict
                + "; nothing was written" + claim);
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
