package dev.idemkit.domain.httpkey;

import java.time.Duration;
import java.util.Objects;

/**
 * How long completed responses are kept (24 h by default, at most 7 days), how long a same-key
 * request waits for the first before answering 409 (10 s by default; zero means never wait), whether a
 * key is required, and the lease of an in-progress claim (60 s by default): a claim whose holder
 * crashed expires after its lease, so the client's retry can run instead of getting 409 for a day. The
 * lease must exceed the longest request, or a retry could run while the first still does.
 */
public record KeyPolicy(Duration ttl, Duration waitBound, Requirement requirement, Duration lease) {
    public static final Duration MAX_TTL = Duration.ofDays(7);
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(60);

    /** Whether requests without a key are refused. */
    public enum Requirement { REQUIRED, OPTIONAL }

    public KeyPolicy {
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(waitBound, "waitBound");
        Objects.requireNonNull(requirement, "requirement");
        if (ttl.isNegative() || ttl.isZero() || ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("idempotency key TTL must lie in (0, 7 days], got " + ttl);
        }
        if (waitBound.isNegative()) {
            throw new IllegalArgumentException("wait bound must not be negative, got " + waitBound);
        }
        Objects.requireNonNull(lease, "lease");
        if (lease.isNegative() || lease.isZero() || lease.compareTo(ttl) > 0) {
            throw new IllegalArgumentException("in-progress lease must lie in (0, ttl], got " + lease);
        }
    }

    /** With the default lease, or the TTL when that is shorter. */
    public KeyPolicy(Duration ttl, Duration waitBound, Requirement requirement) {
        this(ttl, waitBound, requirement, ttl != null && ttl.compareTo(DEFAULT_LEASE) < 0 ? ttl : DEFAULT_LEASE);
    }

    public static KeyPolicy defaults() {
        return new KeyPolicy(Duration.ofHours(24), Duration.ofSeconds(10), Requirement.REQUIRED);
    }

    public KeyPolicy withTtl(Duration t) {
        return new KeyPolicy(t, waitBound, requirement, lease.compareTo(t) > 0 ? t : lease);
    }

    public KeyPolicy withWaitBound(Duration w) {
        return new KeyPolicy(ttl, w, requirement, lease);
    }

    public KeyPolicy withLease(Duration l) {
        return new KeyPolicy(ttl, waitBound, requirement, l);
    }
}
