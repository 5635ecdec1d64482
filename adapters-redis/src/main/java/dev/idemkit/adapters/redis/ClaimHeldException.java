package dev.idemkit.adapters.redis;

import dev.idemkit.ports.out.StoreUnavailableException;

/**
 * Retryable: the key is claimed by another live delivery that has not completed yet. It is not a duplicate
 * yet (the first may still fail and release), so the delivery must be retried later, never acknowledged.
 */
public final class ClaimHeldException extends StoreUnavailableException {
    private static final long serialVersionUID = 1L;

    public ClaimHeldException(String message) {
        super(message, null);
    }
}
