package dev.idemkit.adapters.redis;

import dev.idemkit.ports.out.StoreUnavailableException;

/**
 * Retryable: the effect outlived its lease, the claim expired (and may have been taken over), so neither the
 * staged writes nor the completion were applied. A retry finds the key completed (a duplicate) or runs again.
 */
public final class ClaimLostException extends StoreUnavailableException {
    private static final long serialVersionUID = 1L;

    public ClaimLostException(String message) {
        super(message, null);
    }
}
