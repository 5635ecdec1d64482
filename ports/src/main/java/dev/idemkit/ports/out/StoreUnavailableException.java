package dev.idemkit.ports.out;

/**
 * The store could not be reached or failed for a reason of its own (connection lost, timeout,
 * serialization failure). Nothing was committed. Retryable. Adapters translate their technology's
 * exceptions into this one; none of theirs crosses a port.
 */
public class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
