package dev.idemkit.domain.deadletter;

import java.time.Instant;
import java.util.Objects;

/** Who approved a redrive, why, and when. Both who and why are required, as text without control characters. */
public record Approval(String approvedBy, String reason, Instant at) {
    public Approval {
        if (approvedBy == null || approvedBy.isBlank()) {
            throw new IllegalArgumentException("a redrive needs an approver (who)");
        }
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a redrive needs a reason (why)");
        }
        requireText("approver", approvedBy);
        requireText("reason", reason);
        Objects.requireNonNull(at, "at");
    }

    /** Who and why are recorded (audit, headers, the database): text without control characters. */
    private static void requireText(String what, String value) {
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(String.format("a redrive's %s is recorded as text: no control"
                        + " characters (U+%04X at index %d)", what, (int) value.charAt(i), i));
            }
        }
    }
}
