package dev.idemkit.domain.deadletter;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A request to move chosen dead letters (by their DLQ id) back to their origin queue, with its approval.
 *
 * @param pastWindow a second approval, by another person, that also lets through dead letters older than the
 *     dedup window (whose keys the inbox may have purged, so that an effect that already ran could run again)
 */
public record RedriveRequest(List<String> deadLetterIds, Approval approval, Optional<Approval> pastWindow) {
    public RedriveRequest {
        deadLetterIds = List.copyOf(deadLetterIds);
        if (deadLetterIds.isEmpty()) {
            throw new IllegalArgumentException("a redrive names at least one dead letter");
        }
        Objects.requireNonNull(approval, "a redrive needs an approval");
        Objects.requireNonNull(pastWindow, "pastWindow");
        if (pastWindow.isPresent() && sameperson(approval, pastWindow.get())) {
            throw new IllegalArgumentException("redriving past the dedup window needs a second approval by another"
                    + " person than " + approval.approvedBy());
        }
    }

    /** A redrive within the dedup window only. */
    public RedriveRequest(List<String> deadLetterIds, Approval approval) {
        this(deadLetterIds, approval, Optional.empty());
    }

    private static boolean sameperson(Approval a, Approval b) {
        return a.approvedBy().trim().toLowerCase(Locale.ROOT).equals(b.approvedBy().trim().toLowerCase(Locale.ROOT));
    }
}
