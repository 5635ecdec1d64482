package dev.idemkit.ports.out;

import dev.idemkit.domain.deadletter.Approval;
import java.util.List;
import java.util.Optional;

/**
 * The outbox as operators see it: the messages the relay had to park, and what may be done with them, each action
 * with its approval recorded. Thread-safe.
 */
public interface ParkedOutbox {

    /** Parked rows, oldest first, up to {@code max}. */
    List<OutboxEntry> parked(int max);

    /** Unsent rows (pending and parked), oldest first, up to {@code max}. */
    List<OutboxEntry> unsent(int max);

    /** One row by its message id. */
    Optional<OutboxEntry> find(String id);

    /**
     * Puts a parked row back in line (due now, attempts kept in its history), recording the approval with it.
     *
     * @return false when no parked row has that id
     */
    boolean redrive(String id, Approval approval);

    /**
     * Gives up on a parked row for good, recording the approval with it: it is never published, and the rows behind it
     * in its key go out. For a message no broker will ever accept (a redrive would only park it again).
     *
     * @return false when no parked row has that id
     */
    boolean discard(String id, Approval approval);
}
