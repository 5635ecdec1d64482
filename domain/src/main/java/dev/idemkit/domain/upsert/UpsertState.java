package dev.idemkit.domain.upsert;

import dev.idemkit.domain.NaturalKey;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** The entities present, by natural key. Immutable. */
public record UpsertState<T>(Map<NaturalKey, T> entities) {
    public UpsertState {
        entities = Map.copyOf(entities);
    }

    public static <T> UpsertState<T> empty() {
        return new UpsertState<>(Map.of());
    }

    public Optional<T> get(NaturalKey key) {
        return Optional.ofNullable(entities.get(key));
    }

    UpsertState<T> with(NaturalKey key, T value) {
        Map<NaturalKey, T> next = new HashMap<>(entities);
        next.put(key, value);
        return new UpsertState<>(next);
    }
}
