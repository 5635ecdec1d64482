package dev.idemkit.adapters.sqs;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.idemkit.domain.DedupId;
import java.io.IOException;

/**
 * The FIFO {@code MessageDeduplicationId} derived from content: the hex SHA-256 of the canonical body.
 * A JSON body is canonicalised first (object keys sorted, insignificant whitespace dropped, decimals
 * kept exact), so that {@code {"a":1,"b":2}} and {@code { "b": 2, "a": 1 }} are one message; any other
 * body (not JSON, trailing garbage, duplicate keys) is hashed as its raw bytes.
 */
final class ContentDedup {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(JsonNodeFeature.WRITE_PROPERTIES_SORTED)
            .build();

    private ContentDedup() {}

    static DedupId of(byte[] body) {
        return DedupId.ofContent(canonical(body));
    }

    /** The canonical JSON bytes, or the body itself when it is not exactly one JSON value. */
    static byte[] canonical(byte[] body) {
        try {
            JsonNode tree = JSON.readTree(body);
            if (tree == null || tree.isMissingNode()) {
                return body;
            }
            return JSON.writeValueAsBytes(tree);
        } catch (IOException notJson) {
            return body;
        }
    }
}
