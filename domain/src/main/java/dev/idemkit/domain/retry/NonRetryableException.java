package dev.idemkit.domain.retry;

/**
 * Thrown by a handler (or by idemkit itself) for a failure that no retry can fix: a malformed
 * payload, a failed validation, a missing message id. The message goes to the dead-letter queue at
 * once with this exception's message as the reason.
 */
public class NonRetryableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NonRetryableException(String reason) {
        super(reason);
    }

    public NonRetryableException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
