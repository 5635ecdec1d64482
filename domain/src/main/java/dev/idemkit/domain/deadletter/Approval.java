package dev.idemkit.domain.deadletter;

import java.time.Instant;
import java.util.Objects;

/** Who approved a redrive, why, and when. Both who and why are required. */
public record Approval(String approvedBy, String reason, Instant at) {
    public Approval {
        if (approvedBy == null || approvedBy.isBlank()) {
            throw new IllegalArgumentException("a redrive needs an approver (who)");
        }
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a redrive needs a reason (why)");
        }
        Objects.requireNonNull(at, "at");
    }
}
