package dev.idemkit.app.http;

import dev.idemkit.domain.httpkey.ClientId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Client credentials: {@code Authorization: Bearer <api key>} maps to a client id. Keys are compared
 * in constant time and never logged. Configured as {@code client-a=key-a,client-b=key-b}.
 */
public final class ApiKeys {
    private final Map<String, ClientId> byKey;

    private ApiKeys(Map<String, ClientId> byKey) {
        this.byKey = Map.copyOf(byKey);
    }

    /** Parses {@code client=key} pairs. */
    public static ApiKeys of(Map<String, String> keyByClient) {
        Map<String, ClientId> byKey = new LinkedHashMap<>();
        keyByClient.forEach((client, key) -> {
            if (key == null || key.length() < 8) {
                throw new IllegalArgumentException("API key of client '" + client + "' must be at least 8 characters");
            }
            if (byKey.put(key, ClientId.of(client)) != null) {
                throw new IllegalArgumentException("two clients share one API key");
            }
        });
        if (byKey.isEmpty()) {
            throw new IllegalArgumentException("at least one API key is required (client=key)");
        }
        return new ApiKeys(byKey);
    }

    /** The client for an {@code Authorization} header value, empty when missing or unknown. */
    public Optional<ClientId> authenticate(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        byte[] presented = authorization.substring(7).strip().getBytes(StandardCharsets.UTF_8);
        ClientId found = null;
        for (Map.Entry<String, ClientId> e : byKey.entrySet()) {
            if (MessageDigest.isEqual(presented, e.getKey().getBytes(StandardCharsets.UTF_8))) {
                found = e.getValue();
            }
        }
        return Optional.ofNullable(found);
    }

    public int size() {
        return byKey.size();
    }
}
