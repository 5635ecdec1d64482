package dev.idemkit.domain.deadletter;

import java.time.Instant;
import java.util.Objects;

/** One failed attempt: its number (from 1), when it happened and the error it ended with. */
public record AttemptRecord(int number, Instant at, String error) {
    public AttemptRecord {
        if (number < 1) {
            throw new IllegalArgumentException("attempt numbers count from 1, got " + number);
        }
        Objects.requireNonNull(at, "at");
        error = error == null ? "" : error;
    }
}
