package dev.idemkit.ports.in;

import dev.idemkit.domain.deadletter.FailureGroup;
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

    /**
     * The dead letters of {@code queue} grouped by the shape of their reasons ({@link FailureGroup#of}), largest group
     * first: of the first {@code max} at most, oldest first, so that a queue of millions costs no more than a page.
     */
    FailureGroups groups(String queue, int max);

    /**
     * Failure groups of the first {@code scanned} dead letters of a queue; {@code complete} when those were all the
     * queue held (fewer than asked for were there), so the counts are the queue's and not a sample's.
     */
    record FailureGroups(List<FailureGroup> groups, int scanned, boolean complete) {
        public FailureGroups {
            groups = List.copyOf(groups);
            if (scanned < 0) {
                throw new IllegalArgumentException("scanned must be >= 0, got " + scanned);
            }
        }
    }

    /**
     * The age of the dead letter at the head of {@code queue} (the one dead-lettered first), counted as the redrive
     * window counts it ({@code RedriveWindow.age}: from its first failed attempt); empty when the queue holds none.
     * Read with the queue's {@code peek} of one: a single message on RabbitMQ, while a dead-letter topic (Kafka) or an
     * SQS queue reads as a listing does. A dead letter behind the head whose first attempt was earlier is not looked
     * for.
     */
    Optional<Duration> oldestAge(String queue);

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
