package dev.idemkit.ports.in;

import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.ports.out.DeadLetterEntry;
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

    /** What a redrive did with one dead letter. */
    record RedriveResult(String deadLetterId, RedriveAction action, boolean found) {}

    /** Redrives the chosen dead letters, skipping those the inbox already holds as processed. */
    List<RedriveResult> redrive(String queue, RedriveRequest request);
}
