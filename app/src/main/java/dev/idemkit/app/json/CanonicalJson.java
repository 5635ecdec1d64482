package dev.idemkit.app.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.math.BigDecimal;

/**
 * Canonical JSON: object keys sorted, no insignificant whitespace, numbers kept as written (so
 * {@code 150.00} stays {@code 150.00}; exponents are written out). Two requests that differ only in key
 * order or spacing get the same fingerprint.
 *
 * <p>Bounded: a number is refused when writing it out would take more than {@value #MAX_NUMBER_DIGITS}
 * digits ({@code 1e9999} is six characters but ten thousand digits written plainly), so the canonical form
 * is never much longer than its input; nesting deeper than {@value #MAX_DEPTH} is refused too, and so is an object
 * that names a field twice.
 */
public final class CanonicalJson {
    /** The most significant digits, and the most digits before or after the point, of a number. */
    public static final int MAX_NUMBER_DIGITS = 64;
    /** The deepest nesting of arrays and objects. */
    public static final int MAX_DEPTH = 64;

    /** Shared, thread-safe. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            // {"amount":5,"amount":5000}: which one a reader takes is the reader's choice, so no decision and no
            // fingerprint is made from it: refused
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(JsonNodeFeature.WRITE_PROPERTIES_SORTED)
            .enable(com.fasterxml.jackson.core.StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .nodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
            .build();

    private CanonicalJson() {}

    /**
     * @throws IllegalArgumentException when the bytes are not one JSON value, or hold a number or a nesting past
     *     the limits
     */
    public static JsonNode parse(byte[] body) {
        try {
            JsonNode node = MAPPER.readTree(body);
            if (node == null || node.isMissingNode()) {
                throw new IllegalArgumentException("body is empty; a JSON value is required");
            }
            requireWithinLimits(node, 0);
            return node;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("body is not valid JSON: " + e.getOriginalMessage(), e);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("body could not be read: " + e.getMessage(), e);
        }
    }

    private static void requireWithinLimits(JsonNode node, int depth) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("body nests arrays and objects deeper than " + MAX_DEPTH + " levels");
        }
        if (node.isNumber()) {
            BigDecimal n = node.decimalValue();
            int integerDigits = n.precision() - n.scale();
            if (n.precision() > MAX_NUMBER_DIGITS || Math.abs(n.scale()) > MAX_NUMBER_DIGITS
                    || integerDigits > MAX_NUMBER_DIGITS) {
                throw new IllegalArgumentException("a number in the body needs more than " + MAX_NUMBER_DIGITS
                        + " digits written out (significant digits " + n.precision() + ", exponent " + -n.scale() + ")");
            }
        }
        for (JsonNode child : node) {
            requireWithinLimits(child, depth + 1);
        }
    }

    public static byte[] canonical(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a parsed JSON tree always serialises", e);
        }
    }

    public static byte[] canonical(byte[] body) {
        return canonical(parse(body));
    }
}
