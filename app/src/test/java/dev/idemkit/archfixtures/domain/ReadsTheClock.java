package dev.idemkit.archfixtures.domain;

import java.time.Instant;

/** Violates "domain never reads the clock": time must be passed in. */
public class ReadsTheClock {
    public boolean expired(Instant expiresAt) {
        return Instant.now().isAfter(expiresAt);
    }
}
