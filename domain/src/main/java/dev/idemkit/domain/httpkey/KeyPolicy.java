package dev.idemkit.domain.httpkey;

import java.time.Duration;
import java.util.Objects;

/**
 * How long completed responses are kept (24 h by default, at most 7 days), how long a same-key
 * request waits for the first before answering 409 (10 s by default; zero means never wait), and
 * whether a key is required.
 */
public record KeyPolicy(Duration ttl, Duration waitBound, Requirement requirement) {
    public static final Duration MAX_TTL = Duration.ofDays(7);

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
    }

    public static KeyPolicy defaults() {
        return new KeyPolicy(Duration.ofHours(24), Duration.ofSeconds(10), Requirement.REQUIRED);
    }

    public KeyPolicy withTtl(Duration t) {
        return new KeyPolicy(t, waitBound, requirement);
    }

    public KeyPolicy withWaitBound(Duration w) {
        return new KeyPolicy(ttl, w, requirement);
    }
}
