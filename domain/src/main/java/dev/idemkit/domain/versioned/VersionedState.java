package dev.idemkit.domain.versioned;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** Every aggregate's current versioned value. Immutable. */
public record VersionedState<T>(Map<String, VersionedValue<T>> aggregates) {
    public VersionedState {
        aggregates = Map.copyOf(aggregates);
    }

    public static <T> VersionedState<T> empty() {
        return new VersionedState<>(Map.of());
    }

    public Optional<VersionedValue<T>> get(String aggregateId) {
        return Optional.ofNullable(aggregates.get(aggregateId));
    }

    VersionedState<T> with(String aggregateId, VersionedValue<T> value) {
        Map<String, VersionedValue<T>> next = new HashMap<>(aggregates);
        next.put(aggregateId, value);
        return new VersionedState<>(next);
    }
}
