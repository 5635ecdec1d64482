package dev.idemkit.domain.upsert;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;

/** The upsert decision as a pure function: the first insert of a natural key wins, later ones are duplicates. */
public final class Upsert {
    private Upsert() {}

    /** @return PROCESSED when the key is absent, DUPLICATE when present */
    public static Outcome decide(boolean present) {
        return present ? Outcome.DUPLICATE : Outcome.PROCESSED;
    }

    public static <T> Transition<UpsertState<T>> apply(UpsertState<T> state, NaturalKey key, T value) {
        Outcome outcome = decide(state.get(key).isPresent());
        return new Transition<>(outcome.effectRan() ? state.with(key, value) : state, outcome);
    }
}
