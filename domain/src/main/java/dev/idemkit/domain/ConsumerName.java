package dev.idemkit.domain;

/**
 * The name of a consumer. Part of every inbox key: one message fanned out to two consumers runs once
 * in each. Validated by {@link KeyRules}.
 */
public record ConsumerName(String value) {
    public ConsumerName {
        KeyRules.requireValid("consumer name", value);
    }

    public static ConsumerName of(String value) {
        return new ConsumerName(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
