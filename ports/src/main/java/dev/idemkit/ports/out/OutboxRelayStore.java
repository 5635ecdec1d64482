package dev.idemkit.ports.out;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The outbox as the relay sees it: the hand-out of committed rows and the wake-up on a commit (the append side is
 * {@link Outbox}; operators use {@link ParkedOutbox}, maintenance {@link OutboxMaintenance}).
 *
 * <p>Atomic step: {@link #relay} hands out committed rows that are due and are the oldest unsent row of their ordering
 * key (or the rows right after such a head, in order), holding them so that no other relay instance can hand out
 * those rows or any later row of the same keys, and records what the publisher answered for each, all in one
 * transaction. Rows the publisher answered nothing for stay as they were. Thread-safe; any number of relay instances
 * may share one store.
 *
 * <p>A pass may also go on while it publishes ({@link #relay(int, int, Instant, StreamingPublisher)}): the publisher
 * asks for more rows of the keys the pass holds, and of keys it does not hold yet, while the rows it has are still
 * going out, and hands outcomes over as they come. The store takes them while the publishing goes on, in the same
 * transaction, which commits when the publisher returns: what a crash interrupts is handed out again, with the same
 * ids, as with a pass that hands everything out at once.
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
     * The rows of a pass that goes on while it publishes. Calls come from the publisher's thread; answers may come on
     * another.
     */
    interface Pass {
        /**
         * Asks for up to {@code rows} more rows, answered once through {@code answer}: first the rows after the last
         * one handed out for each key of {@code keys} that this pass holds, committed since or not (spread evenly, each
         * key's in order, a key's run stopping at its first row that is not due), then, with what is left, runs of
         * keys this pass does not hold yet, heads first. Never more than the pass's bound in all. An empty answer:
         * nothing more for now. A failed answer: the store failed, the pass will record nothing, and the publisher
         * should write no more and wait for what it wrote.
         */
        void more(Collection<String> keys, int rows, BiConsumer<List<List<OutboxRow>>, Throwable> answer);

        /**
         * Records outcomes, each at most once per pass, in the pass's transaction, after whatever was asked before;
         * nothing is committed before the pass ends. The map is handed over: the caller never changes it after.
         */
        void record(Map<String, RelayOutcome> outcomes);

        /**
         * Whether the store failed during this pass (an ask or a record): nothing of it will be recorded, and the
         * publisher should write no more and wait for what it wrote.
         */
        default boolean failed() {
            return false;
        }
    }

    /** Publishes a pass that goes on while it publishes. */
    @FunctionalInterface
    interface StreamingPublisher {
        /**
         * Publishes {@code first} (as {@link Publisher#publish} would) and whatever it asks {@code pass} for, records
         * every outcome through {@link Pass#record}, and returns only once nothing it wrote is still in flight.
         */
        void publish(List<List<OutboxRow>> first, Pass pass);
    }

    /**
     * One relay pass that goes on while it publishes: up to {@code first} rows handed out as {@link #relay(int,
     * Instant, Publisher)} would, then whatever the publisher asks for through {@link Pass#more}, up to {@code max}
     * rows in all, every row held until the pass commits. The default hands out {@code first} rows and answers every
     * ask for more with nothing: a store that only has the batch form still relays, one batch a pass.
     *
     * @return how many rows were handed out
     * @throws StoreUnavailableException as {@link #relay(int, Instant, Publisher)}
     */
    default int relay(int first, int max, Instant now, StreamingPublisher publisher) {
        if (max < first) {
            throw new IllegalArgumentException("a pass's bound " + max + " is below its first hand-out " + first);
        }
        return relay(first, now, runs -> {
            Map<String, RelayOutcome> recorded = new java.util.HashMap<>();
            publisher.publish(runs, new Pass() {
                @Override
                public void more(Collection<String> keys, int rows, BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
                    answer.accept(List.of(), null);
                }

                @Override
                public void record(Map<String, RelayOutcome> outcomes) {
                    recorded.putAll(outcomes);
                }
            });
            return recorded;
        });
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
