package dev.idemkit.domain.deadletter;

import dev.idemkit.domain.Message;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A message that will not be processed without a human: the original message untouched (its origin
 * queue included), why it was given up, every attempt with its timestamp and error, and when.
 */
public record DeadLetter(Message original, String reason, List<AttemptRecord> attempts, Instant deadLetteredAt) {
    public DeadLetter {
        Objects.requireNonNull(original, "original");
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a dead letter needs a reason");
        }
        attempts = List.copyOf(attempts);
        Objects.requireNonNull(deadLetteredAt, "deadLetteredAt");
    }

    public String originQueue() {
        return original.originQueue();
    }
}
