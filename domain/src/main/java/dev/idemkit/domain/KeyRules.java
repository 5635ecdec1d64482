package dev.idemkit.domain;

import java.util.Optional;

/**
 * The one rule every key in idemkit obeys: 1 to 255 visible ASCII characters (0x21..0x7E).
 *
 * <p>Visible ASCII keeps keys safe to put in HTTP headers, AMQP properties, SQS attributes, SQL
 * bind parameters and Redis key names alike; no control character can forge a log line or a key
 * separator.
 */
public final class KeyRules {
    /** The longest key accepted, in characters. */
    public static final int MAX_LENGTH = 255;

    private KeyRules() {}

    /**
     * Checks {@code value} against the key rule.
     *
     * @param what the name of the key, used in the error message ("message id", "idempotency key")
     * @return the value, unchanged
     * @throws InvalidKeyException naming the broken rule
     */
    public static String requireValid(String what, String value) {
        Optional<String> broken = violation(what, value);
        if (broken.isPresent()) {
            throw new InvalidKeyException(broken.get());
        }
        return value;
    }

    /** True when {@link #requireValid} would accept the value. */
    public static boolean isValid(String value) {
        return violation("key", value).isEmpty();
    }

    /**
     * The message {@link #requireValid} would throw, naming the broken rule; empty when the value is valid. One
     * scan of the value, for callers that must turn a bad key into a reason rather than an exception.
     */
    public static Optional<String> violation(String what, String value) {
        if (value == null) {
            return Optional.of(what + " is missing (rule: 1.." + MAX_LENGTH + " visible ASCII characters)");
        }
        if (value.isEmpty()) {
            return Optional.of(what + " is empty (rule: at least 1 character)");
        }
        if (value.length() > MAX_LENGTH) {
            return Optional.of(what + " is " + value.length() + " characters long (rule: at most " + MAX_LENGTH + ")");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return Optional.of(what + " has a non-visible or non-ASCII character 0x" + Integer.toHexString(c)
                        + " at index " + i + " (rule: visible ASCII 0x21..0x7E only)");
            }
        }
        return Optional.empty();
    }
}
