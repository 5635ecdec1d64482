package dev.idemkit.archfixtures.ok.domain;

import java.time.Instant;

/** Conforms: a pure function of its inputs. */
public class PureDecision {
    public boolean expired(Instant now, Instant expiresAt) {
        return !now.isBefore(expiresAt);
    }
}
