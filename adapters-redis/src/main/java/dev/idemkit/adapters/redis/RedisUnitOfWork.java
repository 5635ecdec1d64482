package dev.idemkit.adapters.redis;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.ports.out.UnitOfWork;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Redis writes staged by an effect. Nothing is sent while the effect runs: the store applies the staged writes
 * in the same Lua script that marks the key completed, after checking that the claim is still ours, so the
 * effect and the key commit together or not at all (within Redis' durability). Writes the effect makes
 * anywhere else are not covered.
 *
 * <p>Every staged command is type-checked on the server before any write, so a wrong-typed key fails the whole
 * script instead of half of it; a key may only be staged with commands of one family (string, hash, set;
 * {@code DEL} goes with any). On Redis Cluster each key must hash to the claim's slot: build keys with
 * {@link #key(String)} or put {@link #hashTag()} in them; other keys are refused when staged. Not thread-safe:
 * one effect, one thread.
 */
public final class RedisUnitOfWork implements UnitOfWork {
    /** One staged command: op and up to two arguments (empty when unused). */
    record Staged(String op, String key, String a, String b) {}

    private final KeyLayout layout;
    private final String tag;
    private final boolean cluster;
    private final int slot;
    private final List<Staged> staged = new ArrayList<>();
    private final Map<String, String> families = new HashMap<>();
    private boolean closed;
    private List<Staged> frozen = List.of();

    RedisUnitOfWork(KeyLayout layout, String claimKey, boolean cluster) {
        this.layout = layout;
        this.tag = KeyLayout.hashTag(claimKey);
        this.cluster = cluster;
        this.slot = cluster ? KeyLayout.slot(claimKey) : -1; // only a cluster checks slots
    }

    /** The claim's hash tag, braces included: any key containing it (first) lands in the claim's slot. */
    public String hashTag() {
        return tag;
    }

    /** A key {@code <prefix>:data:<hash tag>:<name>} in the claim's slot; {@code name} is 1..255 visible ASCII. */
    public String key(String name) {
        return layout.data(tag, name);
    }

    public RedisUnitOfWork set(String key, String value) {
        return stage("SET", "string", key, Objects.requireNonNull(value, "value"), "");
    }

    public RedisUnitOfWork set(String key, String value, Duration ttl) {
        if (ttl.compareTo(Duration.ofMillis(1)) < 0 || ttl.compareTo(RedisSettings.MAX_TTL) > 0) {
            throw new IllegalArgumentException("TTL must be between 1 ms and " + RedisSettings.MAX_TTL.toDays()
                    + " days, got " + ttl);
        }
        return stage("SET", "string", key, Objects.requireNonNull(value, "value"), Long.toString(ttl.toMillis()));
    }

    /** INCRBY: a counter kept as a decimal string; fails the whole commit when the key holds a non-integer. */
    public RedisUnitOfWork incrBy(String key, long delta) {
        return stage("INCRBY", "counter", key, Long.toString(delta), "");
    }

    public RedisUnitOfWork hset(String key, String field, String value) {
        return stage("HSET", "hash", key, Objects.requireNonNull(field, "field"), Objects.requireNonNull(value, "value"));
    }

    public RedisUnitOfWork hincrBy(String key, String field, long delta) {
        return stage("HINCRBY", "hash", key, Objects.requireNonNull(field, "field"), Long.toString(delta));
    }

    public RedisUnitOfWork sadd(String key, String member) {
        return stage("SADD", "set", key, Objects.requireNonNull(member, "member"), "");
    }

    public RedisUnitOfWork del(String key) {
        return stage("DEL", null, key, "", "");
    }

    private RedisUnitOfWork stage(String op, String family, String key, String a, String b) {
        if (closed) {
            throw new IllegalStateException("this unit of work has already been committed or rolled back");
        }
        KeyRules.requireValid("Redis key", key);
        if (layout.isStoreKey(key)) {
            throw new IllegalArgumentException("key " + key + " belongs to the inbox or the Idempotency-Key records;"
                    + " an effect cannot write it (use RedisUnitOfWork.key(name) for effect data)");
        }
        if (cluster && KeyLayout.slot(key) != slot) {
            throw new IllegalArgumentException("key " + key + " is not in the claim's cluster slot: put the hash tag "
                    + tag + " in it (RedisUnitOfWork.key(name) does)");
        }
        if (family != null) {
            String earlier = families.putIfAbsent(key, family);
            if (earlier != null && !earlier.equals(family)) {
                throw new IllegalArgumentException(op + " on " + key + " mixes a " + family + " command with a "
                        + earlier + " one in one unit of work");
            }
        }
        staged.add(new Staged(op, key, a, b));
        return this;
    }

    /** The staged writes; after {@link #close()} the same unmodifiable list every time. */
    List<Staged> staged() {
        return closed ? frozen : List.copyOf(staged);
    }

    void close() {
        if (!closed) {
            frozen = List.copyOf(staged);
            closed = true;
        }
    }
}
