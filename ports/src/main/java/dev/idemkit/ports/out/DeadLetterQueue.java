package dev.idemkit.ports.out;

import dev.idemkit.domain.deadletter.Approval;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The dead-letter queue of a work queue: depth, inspection without consuming, and the one move back
 * to the origin queue, which needs an approval. Nothing here is automatic.
 */
public interface DeadLetterQueue {

    /** How many dead letters the DLQ of {@code queue} holds now. */
    long depth(String queue);

    /**
     * How long the broker keeps a dead letter of {@code queue}, as the broker itself enforces and reports it;
     * empty when it keeps them until they are removed, or does not say. The dedup window must cover it.
     */
    Optional<Duration> retention(String queue);

    /** Up to {@code max} dead letters, oldest first, left in place (nothing is consumed or reordered for good). */
    List<DeadLetterEntry> peek(String queue, int max);

    /** One dead letter by its id, left in place. */
    Optional<DeadLetterEntry> find(String queue, String deadLetterId);

    /**
     * Moves one dead letter back to its origin queue, with the approval recorded on the republished
     * message, and removes it from the DLQ only after the republish is confirmed.
     *
     * @return false when no dead letter has that id (already redriven, or never there)
     */
    boolean redrive(String queue, String deadLetterId, Approval approval);
}
