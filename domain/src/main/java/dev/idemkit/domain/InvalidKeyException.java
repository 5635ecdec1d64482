package dev.idemkit.domain;

/** A key (message id, idempotency key, natural key, consumer name) broke the key rule; the message names it. */
public final class InvalidKeyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidKeyException(String message) {
        super(message);
    }
}
