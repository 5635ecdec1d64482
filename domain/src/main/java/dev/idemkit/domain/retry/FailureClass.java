package dev.idemkit.domain.retry;

/** Whether trying again could ever succeed. */
public enum FailureClass {
    /** transient (a timeout, a lost connection, a deadlock): retry with backoff. */
    RETRYABLE,
    /** permanent (validation, malformed payload, missing message id): dead-letter at once. */
    NON_RETRYABLE
}
