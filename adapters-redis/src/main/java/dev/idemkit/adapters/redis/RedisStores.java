package dev.idemkit.adapters.redis;

import dev.idemkit.domain.KeyRules;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The Redis stores over one client that this object owns, for callers that must not name Redisson (an
 * application wiring adapters): the inbox, the Idempotency-Key records, and plain key-value access to
 * the caller's own state (a balance, a reservation) with atomic multi-key writes ({@code MULTI/EXEC}).
 * Every Redis failure comes back as a {@code StoreUnavailableException}. Thread-safe.
 */
public final class RedisStores implements AutoCloseable {
    private final RedissonClient client;
    private final RedisSettings settings;
    private final RedisInboxStore inbox;
    private final RedisIdempotencyRecords records;
    private final RedisBulkInbox bulkInbox;

    private RedisStores(RedissonClient client, RedisSettings settings) {
        this.client = client;
        this.settings = settings;
        this.inbox = new RedisInboxStore(client, settings);
        this.records = new RedisIdempotencyRecords(client, settings);
        this.bulkInbox = new RedisBulkInbox(inbox);
    }

    /** Connects; fails with a {@code StoreUnavailableException} naming the address when Redis does not answer. */
    public static RedisStores connect(RedisSettings settings) {
        Objects.requireNonNull(settings, "settings");
        return Failures.call("connect to " + settings.addresses(), () -> new RedisStores(RedisClients.create(settings),
                settings));
    }

    public RedisInboxStore inbox() {
        return inbox;
    }

    /** The inbox for a batch of deliveries: a few keys' steps per script, two round trips per batch (one if staged). */
    public RedisBulkInbox bulkInbox() {
        return bulkInbox;
    }

    public RedisIdempotencyRecords idempotencyRecords() {
        return records;
    }

    public RedisSettings settings() {
        return settings;
    }

    /** Writes staged by a caller outside any inbox key, applied all together or not at all. */
    public static final class Writes {
        private final RBatch batch;

        private Writes(RBatch batch) {
            this.batch = batch;
        }

        public Writes set(String key, String value) {
            batch.getBucket(valid(key), StringCodec.INSTANCE).setAsync(Objects.requireNonNull(value, "value"));
            return this;
        }

        public Writes incrBy(String key, long delta) {
            batch.getAtomicLong(valid(key)).addAndGetAsync(delta);
            return this;
        }

        public Writes hset(String key, String field, String value) {
            batch.getMap(valid(key), StringCodec.INSTANCE).fastPutAsync(field, value);
            return this;
        }

        public Writes sadd(String key, String member) {
            batch.getSet(valid(key), StringCodec.INSTANCE).addAsync(member);
            return this;
        }
    }

    /** Applies the staged writes in one {@code MULTI/EXEC}: all of them or none. */
    public void atomically(Consumer<Writes> staging) {
        Failures.call("apply writes", () -> {
            RBatch batch = client.createBatch(BatchOptions.defaults()
                    .executionMode(BatchOptions.ExecutionMode.IN_MEMORY_ATOMIC));
            staging.accept(new Writes(batch));
            batch.execute();
            return null;
        });
    }

    public Optional<String> get(String key) {
        return Failures.call("read " + key, () -> Optional.ofNullable(
                client.<String>getBucket(valid(key), StringCodec.INSTANCE).get()));
    }

    public Map<String, String> hgetAll(String key) {
        return Failures.call("read " + key, () -> new LinkedHashMap<>(
                client.<String, String>getMap(valid(key), StringCodec.INSTANCE).readAllMap()));
    }

    /** The members of a set, in no particular order. */
    public java.util.Set<String> smembers(String key) {
        return Failures.call("read " + key, () -> java.util.Set.copyOf(
                client.<String>getSet(valid(key), StringCodec.INSTANCE).readAll()));
    }

    /** True when Redis answers a PING. */
    public boolean ping() {
        try {
            return client.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).pingAll();
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public void close() {
        client.shutdown();
    }

    private static String valid(String key) {
        return KeyRules.requireValid("Redis key", key);
    }
}
