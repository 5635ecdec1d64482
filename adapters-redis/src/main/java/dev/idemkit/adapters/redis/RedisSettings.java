package dev.idemkit.adapters.redis;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How to reach Redis and how the stores lay out and keep their keys.
 *
 * @param addresses {@code redis://host:port} (or {@code rediss://}); one for a single server, the seed nodes for a cluster
 * @param topology single server or cluster
 * @param password empty for none; never printed
 * @param database database index (single server only; a cluster has database 0 only)
 * @param keyPrefix first segment of every key ({@code [A-Za-z0-9._-]}, 1..64 characters), default {@code idemkit}
 * @param leaseTtl how long an inbox claim lives when its holder crashes (default 30 s); an effect must finish within it
 * @param retentionTtl how long a completed inbox key is kept (default 24 h): the dedup window
 * @param hashTagScope which inbox keys share a cluster slot (default: per consumer)
 * @param claimWait how long a delivery polls (with backoff) a key that another live delivery holds before it gives
 *     up with the retryable {@link ClaimHeldException} (default 2 s; zero: never wait)
 */
public record RedisSettings(List<String> addresses, Topology topology, String password, int database, String keyPrefix,
        Duration leaseTtl, Duration retentionTtl, HashTagScope hashTagScope, Duration claimWait) {

    /** A single server or a Redis Cluster. */
    public enum Topology { SINGLE, CLUSTER }

    /**
     * Which inbox keys share a hash tag, i.e. a cluster slot. Writes staged in a {@link RedisUnitOfWork} must
     * hash to the claim's slot on a cluster ({@link RedisUnitOfWork#key(String)} builds such keys).
     */
    public enum HashTagScope {
        /** all keys of one consumer in one slot: an effect may keep shared state (a balance) beside the inbox. */
        CONSUMER,
        /** every message in its own slot: spreads the load, but effect keys can only be per message. */
        MESSAGE
    }

    public static final String DEFAULT_URL = "redis://127.0.0.1:6379";
    /** The longest TTL any key gets (100 years): Redis refuses an expiry beyond its clock's range half-way through a script. */
    public static final Duration MAX_TTL = Duration.ofDays(36_500);
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    public RedisSettings {
        addresses = List.copyOf(Objects.requireNonNull(addresses, "addresses"));
        Objects.requireNonNull(topology, "topology");
        password = password == null ? "" : password;
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(leaseTtl, "leaseTtl");
        Objects.requireNonNull(retentionTtl, "retentionTtl");
        Objects.requireNonNull(hashTagScope, "hashTagScope");
        Objects.requireNonNull(claimWait, "claimWait");
        if (claimWait.isNegative()) {
            throw new IllegalArgumentException("claim wait must not be negative, got " + claimWait);
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("at least one Redis address is needed");
        }
        for (String a : addresses) {
            if (!a.startsWith("redis://") && !a.startsWith("rediss://")) {
                throw new IllegalArgumentException("a Redis address starts with redis:// or rediss://, got " + a);
            }
        }
        if (topology == Topology.SINGLE && addresses.size() != 1) {
            throw new IllegalArgumentException("a single server has one address, got " + addresses.size());
        }
        if (database < 0 || (topology == Topology.CLUSTER && database != 0)) {
            throw new IllegalArgumentException("database must be >= 0, and 0 on a cluster; got " + database);
        }
        if (!PREFIX.matcher(keyPrefix).matches()) {
            throw new IllegalArgumentException("key prefix must be 1..64 characters of [A-Za-z0-9._-], got " + keyPrefix);
        }
        if (leaseTtl.compareTo(Duration.ofMillis(1)) < 0 || retentionTtl.compareTo(Duration.ofMillis(1)) < 0
                || leaseTtl.compareTo(MAX_TTL) > 0 || retentionTtl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("lease and retention TTL must be between 1 ms and " + MAX_TTL.toDays()
                    + " days, got lease " + leaseTtl + " and retention " + retentionTtl);
        }
    }

    /** A single server at {@code redis://127.0.0.1:6379}, prefix {@code idemkit}, lease 30 s, retention 24 h. */
    public static RedisSettings defaults() {
        return new RedisSettings(List.of(DEFAULT_URL), Topology.SINGLE, "", 0, "idemkit", Duration.ofSeconds(30),
                Duration.ofHours(24), HashTagScope.CONSUMER, Duration.ofSeconds(2));
    }

    /**
     * From {@code IDEMKIT_REDIS_URL} (default {@value #DEFAULT_URL}; comma-separated seed nodes for a cluster; a
     * password in the URL's user info is taken out of the address), {@code IDEMKIT_REDIS_TOPOLOGY}
     * ({@code single}|{@code cluster}), {@code IDEMKIT_REDIS_PASSWORD}, {@code IDEMKIT_REDIS_DATABASE},
     * {@code IDEMKIT_REDIS_PREFIX}, {@code IDEMKIT_REDIS_LEASE_MS}, {@code IDEMKIT_REDIS_RETENTION_MS},
     * {@code IDEMKIT_REDIS_CLAIM_WAIT_MS}.
     */
    public static RedisSettings fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /** As {@link #fromEnvironment()}, from the given variables (for an application that resolves its own settings). */
    public static RedisSettings fromEnvironment(Map<String, String> env) {
        RedisSettings d = defaults();
        String password = env.getOrDefault("IDEMKIT_REDIS_PASSWORD", "");
        List<String> addresses = new java.util.ArrayList<>();
        for (String raw : Arrays.stream(env.getOrDefault("IDEMKIT_REDIS_URL", DEFAULT_URL).split(","))
                .map(String::strip).filter(s -> !s.isEmpty()).toList()) {
            URI uri = URI.create(raw);
            if (uri.getUserInfo() != null) {
                String info = uri.getUserInfo();
                password = info.contains(":") ? info.substring(info.indexOf(':') + 1) : info;
                raw = uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort());
            }
            addresses.add(raw);
        }
        Topology topology = "cluster".equalsIgnoreCase(env.getOrDefault("IDEMKIT_REDIS_TOPOLOGY", "single"))
                ? Topology.CLUSTER : Topology.SINGLE;
        return new RedisSettings(addresses, topology, password,
                Integer.parseInt(env.getOrDefault("IDEMKIT_REDIS_DATABASE", "0")),
                env.getOrDefault("IDEMKIT_REDIS_PREFIX", d.keyPrefix()),
                millis(env, "IDEMKIT_REDIS_LEASE_MS", d.leaseTtl()),
                millis(env, "IDEMKIT_REDIS_RETENTION_MS", d.retentionTtl()), d.hashTagScope(),
                millis(env, "IDEMKIT_REDIS_CLAIM_WAIT_MS", d.claimWait()));
    }

    private static Duration millis(Map<String, String> env, String name, Duration fallback) {
        String v = env.get(name);
        return v == null || v.isBlank() ? fallback : Duration.ofMillis(Long.parseLong(v.strip()));
    }

    public RedisSettings withKeyPrefix(String prefix) {
        return new RedisSettings(addresses, topology, password, database, prefix, leaseTtl, retentionTtl, hashTagScope, claimWait);
    }

    public RedisSettings withLeaseTtl(Duration lease) {
        return new RedisSettings(addresses, topology, password, database, keyPrefix, lease, retentionTtl, hashTagScope, claimWait);
    }

    public RedisSettings withRetentionTtl(Duration retention) {
        return new RedisSettings(addresses, topology, password, database, keyPrefix, leaseTtl, retention, hashTagScope, claimWait);
    }

    public RedisSettings withHashTagScope(HashTagScope scope) {
        return new RedisSettings(addresses, topology, password, database, keyPrefix, leaseTtl, retentionTtl, scope, claimWait);
    }

    public RedisSettings withTopology(Topology t) {
        return new RedisSettings(addresses, t, password, database, keyPrefix, leaseTtl, retentionTtl, hashTagScope, claimWait);
    }

    public RedisSettings withClaimWait(Duration wait) {
        return new RedisSettings(addresses, topology, password, database, keyPrefix, leaseTtl, retentionTtl, hashTagScope,
                wait);
    }

    /** Never shows the password. */
    @Override
    public String toString() {
        return "RedisSettings[addresses=" + addresses + ", topology=" + topology + ", password="
                + (password.isEmpty() ? "(none)" : "***") + ", database=" + database + ", keyPrefix=" + keyPrefix
                + ", leaseTtl=" + leaseTtl + ", retentionTtl=" + retentionTtl + ", hashTagScope=" + hashTagScope + ", claimWait=" + claimWait + "]";
    }
}
