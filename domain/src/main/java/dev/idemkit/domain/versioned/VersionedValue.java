package dev.idemkit.domain.versioned;

import dev.idemkit.domain.Version;
import java.util.Objects;

/** An aggregate's current state and the version that set it. */
public record VersionedValue<T>(Version version, T value) {
    public VersionedValue {
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(value, "value");
    }
}
