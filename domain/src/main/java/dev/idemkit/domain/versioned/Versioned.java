package dev.idemkit.domain.versioned;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import dev.idemkit.domain.Version;
import java.util.Optional;

/** The versioned decision as a pure function: newer applies, equal is a duplicate, older is stale. */
public final class Versioned {
    private Versioned() {}

    /**
     * @param stored the version currently stored, empty when the aggregate does not exist yet
     * @return PROCESSED when {@code incoming} is newer (or the aggregate is new), DUPLICATE when equal,
     *     STALE when older
     */
    public static Outcome decide(Optional<Version> stored, Version incoming) {
        if (stored.isEmpty() || incoming.isNewerThan(stored.get())) {
            return Outcome.PROCESSED;
        }
        return stored.get().equals(incoming) ? Outcome.DUPLICATE : Outcome.STALE;
    }

    public static <T> Transition<VersionedState<T>> apply(VersionedState<T> state, VersionedEvent<T> event) {
        Outcome outcome = decide(state.get(event.aggregateId()).map(VersionedValue::version), event.version());
        VersionedState<T> next = outcome.effectRan()
                ? state.with(event.aggregateId(), new VersionedValue<>(event.version(), event.value()))
                : state;
        return new Transition<>(next, outcome);
    }
}
