package dev.idemkit.domain;

/** The producer-given identity of a message, the inbox's idempotency key. Validated by {@link KeyRules}. */
public record MessageId(String value) {
    public MessageId {
        KeyRules.requireValid("message id", value);
    }

    public static MessageId of(String value) {
        return new MessageId(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
