package dev.idemkit.ports.out;

import dev.idemkit.domain.Outcome;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of a guarded effect: what happened and, when the effect ran in this call, what it returned.
 *
 * @param value the effect's return value, present only when {@code outcome} is processed and the
 *     effect returned non-null
 */
public record Guarded<R>(Outcome outcome, Optional<R> value) {
    public Guarded {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(value, "value");
        if (value.isPresent() && !outcome.effectRan()) {
            throw new IllegalArgumentException("only a processed outcome carries a value, got " + outcome);
        }
    }

    public static <R> Guarded<R> processed(R value) {
        return new Guarded<>(Outcome.PROCESSED, Optional.ofNullable(value));
    }

    public static <R> Guarded<R> of(Outcome outcome) {
        return new Guarded<>(outcome, Optional.empty());
    }
}
