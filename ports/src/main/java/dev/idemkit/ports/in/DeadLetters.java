package dev.idemkit.ports.in;

import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.ports.out.DeadLetterEntry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** Operating a dead-letter queue: look, alert, and redrive with an approval. */
public interface DeadLetters {

    long depth(String queue);

    /** Dead letters left in place, oldest first; each is also logged with origin, attempts and reason. */
    List<DeadLetterEntry> inspect(String queue, int max);

    Optional<DeadLetterEntry> show(String queue, String deadLetterId);

    /** Raises an alert when the depth exceeds the alert policy's threshold; returns whether it did. */
    boolean checkDepth(String queue);

    /**
     * What a redrive did with one dead letter.
     *
     * @param age the dead letter's age when it was decided ({@code RedriveWindow.age}); zero when not found
     * @param dedupWindow the window it was held against
     */
    record RedriveResult(String deadLetterId, RedriveAction action, boolean found, Duration age, Duration dedupWindow) {}

    /**
     * Redrives the chosen dead letters, skipping those the inbox already holds as processed and, unless the request
     * carries a second approval for it, those older than the dedup window.
     */
    List<RedriveResult> redrive(String queue, RedriveRequest request);

    /**
     * A dry run of {@link #redrive}: what it would do with each dead letter now (republish, or skip because the inbox
     * holds its key, it has no usable id, or it is past the dedup window), moving nothing. {@code found} is false for
     * an id the dead-letter queue does not hold.
     */
    List<RedriveResult> plan(String queue, RedriveRequest request);
}
