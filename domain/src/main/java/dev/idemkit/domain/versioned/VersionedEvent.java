package dev.idemkit.domain.versioned;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.Version;
import java.util.Objects;

/** An event that sets an aggregate's state at a version. */
public record VersionedEvent<T>(String aggregateId, Version version, T value) {
    public VersionedEvent {
        KeyRules.requireValid("aggregate id", aggregateId);
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(value, "value");
    }
}
