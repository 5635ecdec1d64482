package dev.idemkit.domain.httpkey;

import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.KeyRules;
import java.util.List;

/** The value of an {@code Idempotency-Key} header: 1..255 visible ASCII characters. */
public record IdempotencyKey(String value) {
    public IdempotencyKey {
        KeyRules.requireValid("idempotency key", value);
    }

    /**
     * The field value of several {@code Idempotency-Key} field lines, combined as RFC 9110 section 5.3 says (in order,
     * joined by a comma): what a proxy in front of the server may have done already. Null when there is no line.
     * {@link #parseHeader} refuses the combination of two or more lines, which is a list and not a key.
     */
    public static String combineFieldLines(List<String> fieldLines) {
        return fieldLines == null || fieldLines.isEmpty() ? null : String.join(", ", fieldLines);
    }

    /**
     * Parses a header value, bare ({@code abc}) or as a structured-field string ({@code "abc"}, with
     * {@code \"} and {@code \\} escapes). A comma outside the quotes makes the value a list (several field lines
     * combined, or several items), which is refused: which member would be the key depends on the order a client or
     * proxy chose, so the same request could claim two keys. A key that holds a comma is sent quoted.
     *
     * @throws InvalidKeyException naming the broken rule (missing, empty, too long, bad character, bad quoting, a list)
     */
    public static IdempotencyKey parseHeader(String raw) {
        if (raw == null) {
            throw new InvalidKeyException("Idempotency-Key header is missing");
        }
        String v = raw.strip();
        if (!v.startsWith("\"")) {
            if (v.indexOf(',') >= 0) {
                throw new InvalidKeyException(LIST);
            }
            return new IdempotencyKey(v);
        }
        StringBuilder out = new StringBuilder();
        int i = 1;
        for (; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '\\') {
                if (i + 1 >= v.length() || (v.charAt(i + 1) != '"' && v.charAt(i + 1) != '\\')) {
                    throw new InvalidKeyException(i + 1 >= v.length()
                            ? "Idempotency-Key is a quoted string without its closing quote"
                            : "Idempotency-Key has a bad escape (only \\\" and \\\\ are allowed)");
                }
                out.append(v.charAt(++i));
            } else if (c == '"') {
                break;
            } else {
                out.append(c);
            }
        }
        if (i >= v.length()) {
            throw new InvalidKeyException("Idempotency-Key is a quoted string without its closing quote");
        }
        String after = v.substring(i + 1).strip();
        if (after.startsWith(",")) {
            throw new InvalidKeyException(LIST);
        }
        if (!after.isEmpty()) {
            throw new InvalidKeyException("Idempotency-Key has an unescaped quote inside the string or text after"
                    + " its closing quote");
        }
        return new IdempotencyKey(out.toString());
    }

    private static final String LIST = "Idempotency-Key is a list (a comma outside a quoted string: several"
            + " Idempotency-Key field lines, or several items), not one key; send exactly one, and quote a key that"
            + " holds a comma";

    @Override
    public String toString() {
        return value;
    }
}
