package dev.idemkit.domain;

import java.util.Objects;

/** The result of applying one delivery to a strategy's state: the next state and what happened. */
public record Transition<S>(S state, Outcome outcome) {
    public Transition {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(outcome, "outcome");
    }
}
