package dev.idemkit.app.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * Canonical JSON: object keys sorted, no insignificant whitespace, numbers kept as written (so
 * {@code 150.00} stays {@code 150.00}). Two requests that differ only in key order or spacing get the
 * same fingerprint.
 */
public final class CanonicalJson {
    /** Shared, thread-safe. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonNodeFeature.WRITE_PROPERTIES_SORTED)
            .enable(com.fasterxml.jackson.core.StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .nodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
            .build();

    private CanonicalJson() {}

    /**
     * @throws IllegalArgumentException when the bytes are not one JSON value
     */
    public static JsonNode parse(byte[] body) {
        try {
            JsonNode node = MAPPER.readTree(body);
            if (node == null || node.isMissingNode()) {
                throw new IllegalArgumentException("body is empty; a JSON value is required");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("body is not valid JSON: " + e.getOriginalMessage(), e);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("body could not be read: " + e.getMessage(), e);
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
