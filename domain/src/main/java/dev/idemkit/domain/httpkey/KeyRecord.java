package dev.idemkit.domain.httpkey;

import dev.idemkit.domain.Fingerprint;
import java.time.Instant;
import java.util.Objects;

/** What is stored under a scoped key: a request still running, or its completed response. */
public sealed interface KeyRecord {
    Fingerprint fingerprint();

    Instant createdAt();

    Instant expiresAt();

    /**
     * A record past its expiry counts as absent: the key is treated as new. Stores with a clock of their own
     * (a database, Redis) decide this on that clock, never on a caller's.
     */
    default boolean isExpired(Instant now) {
        return !now.isBefore(expiresAt());
    }

    /**
     * A request still running.
     *
     * @param fence the claim's fencing token, unique per claim: only the request that holds this very claim
     *     can renew, complete or release it, so one whose claim lapsed and was taken over cannot answer for the key
     */
    record InProgress(Fingerprint fingerprint, Instant createdAt, Instant expiresAt, String fence) implements KeyRecord {
        public InProgress {
            Objects.requireNonNull(fingerprint, "fingerprint");
            Objects.requireNonNull(createdAt, "createdAt");
            Objects.requireNonNull(expiresAt, "expiresAt");
            if (fence == null || fence.isBlank() || fence.length() > 64) {
                throw new IllegalArgumentException("a claim's fence is 1..64 characters, got " + fence);
            }
        }

        /** Whether {@code other} is this same claim (same fence and fingerprint), whatever its times. */
        public boolean sameClaim(InProgress other) {
            return fence.equals(other.fence) && fingerprint.equals(other.fingerprint);
        }
    }

    record Completed(Fingerprint fingerprint, StoredResponse response, Instant createdAt, Instant expiresAt)
            implements KeyRecord {
        public Completed {
            Objects.requireNonNull(fingerprint, "fingerprint");
            Objects.requireNonNull(response, "response");
            Objects.requireNonNull(createdAt, "createdAt");
            Objects.requireNonNull(expiresAt, "expiresAt");
        }
    }
}
