package dev.idemkit.domain.httpkey;

import dev.idemkit.domain.Fingerprint;
import java.time.Instant;
import java.util.Objects;

/** What is stored under a scoped key: a request still running, or its completed response. */
public sealed interface KeyRecord {
    Fingerprint fingerprint();

    Instant createdAt();

    Instant expiresAt();

    /** A record past its expiry counts as absent: the key is treated as new. */
    default boolean isExpired(Instant now) {
        return !now.isBefore(expiresAt());
    }

    record InProgress(Fingerprint fingerprint, Instant createdAt, Instant expiresAt) implements KeyRecord {
        public InProgress {
            Objects.requireNonNull(fingerprint, "fingerprint");
            Objects.requireNonNull(createdAt, "createdAt");
            Objects.requireNonNull(expiresAt, "expiresAt");
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
