package dev.idemkit.testsupport;

import java.util.UUID;

/** Names no other test, and no earlier run against the same long-lived services, has used. */
public final class Names {
    private Names() {}

    /** {@code prefix} + {@code _} + 12 random lowercase hex digits: a valid unquoted SQL identifier for a lowercase prefix. */
    public static String unique(String prefix) {
        return prefix + "_" + tag(12);
    }

    /** {@code n} (1..32) random lowercase hex digits. */
    public static String tag(int n) {
        if (n < 1 || n > 32) {
            throw new IllegalArgumentException("a tag has 1..32 hex digits, not " + n);
        }
        return UUID.randomUUID().toString().replace("-", "").substring(0, n);
    }
}
