package dev.idemkit.ports.out;

/**
 * The store had no room for the call within the caller's wait bound (no pooled connection came free in time), so
 * nothing was attempted and nothing was written. Retryable, like every {@link StoreUnavailableException}; a front door
 * can tell its client so (the payments API answers 503 with Retry-After and says that nothing was charged).
 */
public class StoreBusyException extends StoreUnavailableException {
    private static final long serialVersionUID = 1L;

    public StoreBusyException(String message, Throwable cause) {
        super(message, cause);
    }
}
