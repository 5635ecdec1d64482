package dev.idemkit.ports.out;

import dev.idemkit.domain.deadletter.DeadLetter;
import java.util.Objects;

/** A dead letter as a dead-letter queue holds it, with the id under which it can be redriven. */
public record DeadLetterEntry(String id, DeadLetter deadLetter) {
    public DeadLetterEntry {
        if (id == null || id.isBlank()) {
            throw new IllegalArgumentException("a dead-letter entry needs an id");
        }
        Objects.requireNonNull(deadLetter, "deadLetter");
    }
}
