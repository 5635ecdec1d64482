package dev.idemkit.domain.deadletter;

import java.util.List;
import java.util.Objects;

/** A request to move chosen dead letters (by their DLQ id) back to their origin queue, with its approval. */
public record RedriveRequest(List<String> deadLetterIds, Approval approval) {
    public RedriveRequest {
        deadLetterIds = List.copyOf(deadLetterIds);
        if (deadLetterIds.isEmpty()) {
            throw new IllegalArgumentException("a redrive names at least one dead letter");
        }
        Objects.requireNonNull(approval, "a redrive needs an approval");
    }
}
