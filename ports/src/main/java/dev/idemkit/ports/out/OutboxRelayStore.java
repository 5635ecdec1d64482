package dev.idemkit.ports.out;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The outbox as the relay sees it: the hand-out of committed rows and the wake-up on a commit (the append side is
 * {@link Outbox}; operators use {@link ParkedOutbox}, maintenance {@link OutboxMaintenance}).
 *
 * <p>Atomic step: {@link #relay} hands out committed rows that are due and are the oldest unsent row of their ordering
 * key (or the rows right after such a head, in order), holding them so that no other relay instance can hand out
 * those rows or any later row of the same keys, and records what the publisher answered for each, all in one
 * transaction. Rows the publisher answered nothing for stay as they were. Thread-safe; any number of relay instances
 * may share one store.
 */
public interface OutboxRelayStore {

    /** Publishes a batch; called with the rows held. */
    @FunctionalInterface
    interface Publisher {
        /**
         * Publishes {@code runs}: one list per ordering key, its rows in order (publish a row only after the one before
         * it was confirmed; stop a key's run at its first failure).
         *
         * @return an outcome per row id it attempted; rows without one are left as they were
         */
        Map<String, RelayOutcome> publish(List<List<OutboxRow>> runs);
    }

    /**
     * One relay pass: up to {@code max} due rows (the heads of their keys, plus, for each such key, the rows after it
     * up to the bound), handed to {@code publisher} while held; its outcomes recorded; committed.
     *
     * @return how many rows were handed out (0: nothing due, or all due keys are held by other relays)
     * @throws StoreUnavailableException when the store failed; nothing of this pass was recorded, and a row that was
     *     published is published again later with the same id
     */
    int relay(int max, Instant now, Publisher publisher);

    /**
     * Waits until something may have been appended (a commit notification) or {@code max} passed, whichever comes
     * first. The default waits {@code max}: polling.
     */
    default void awaitAppend(Duration max) throws InterruptedException {
        Thread.sleep(Math.max(1, max.toMillis()));
    }
}
