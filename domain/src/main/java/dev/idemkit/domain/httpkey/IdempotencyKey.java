package dev.idemkit.domain.httpkey;

import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.KeyRules;

/** The value of an {@code Idempotency-Key} header: 1..255 visible ASCII characters. */
public record IdempotencyKey(String value) {
    public IdempotencyKey {
        KeyRules.requireValid("idempotency key", value);
    }

    /**
     * Parses a header value, bare ({@code abc}) or as a structured-field string ({@code "abc"}, with
     * {@code \"} and {@code \\} escapes).
     *
     * @throws InvalidKeyException naming the broken rule (missing, empty, too long, bad character, bad quoting)
     */
    public static IdempotencyKey parseHeader(String raw) {
        if (raw == null) {
            throw new InvalidKeyException("Idempotency-Key header is missing");
        }
        String v = raw.strip();
        if (v.startsWith("\"")) {
            if (v.length() < 2 || !v.endsWith("\"")) {
                throw new InvalidKeyException("Idempotency-Key is a quoted string without its closing quote");
            }
            StringBuilder out = new StringBuilder();
            for (int i = 1; i < v.length() - 1; i++) {
                char c = v.charAt(i);
                if (c == '\\') {
                    if (i + 1 >= v.length() - 1 || (v.charAt(i + 1) != '"' && v.charAt(i + 1) != '\\')) {
                        throw new InvalidKeyException("Idempotency-Key has a bad escape (only \\\" and \\\\ are allowed)");
                    }
                    out.append(v.charAt(++i));
                } else if (c == '"') {
                    throw new InvalidKeyException("Idempotency-Key has an unescaped quote inside the string");
                } else {
                    out.append(c);
                }
            }
            v = out.toString();
        }
        return new IdempotencyKey(v);
    }

    @Override
    public String toString() {
        return value;
    }
}
