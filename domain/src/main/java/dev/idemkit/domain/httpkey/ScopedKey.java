package dev.idemkit.domain.httpkey;

import java.util.Objects;

/** An idempotency key within its client: the identity under which a response is stored. */
public record ScopedKey(ClientId client, IdempotencyKey key) {
    public ScopedKey {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(key, "key");
    }

    public static ScopedKey of(String client, String key) {
        return new ScopedKey(ClientId.of(client), new IdempotencyKey(key));
    }
}
