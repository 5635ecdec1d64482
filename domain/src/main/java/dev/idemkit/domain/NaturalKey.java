package dev.idemkit.domain;

/** A business key that identifies an entity by itself (an order id): the upsert strategy's implicit idempotency key. */
public record NaturalKey(String value) {
    public NaturalKey {
        KeyRules.requireValid("natural key", value);
    }

    public static NaturalKey of(String value) {
        return new NaturalKey(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
