package dev.idemkit.ports.out;

/**
 * The producer side of idempotency: a message appended inside a unit of work is sent if and only if that unit of work
 * commits (docs/ARCHITECTURE.md section 9). The effect and the events it emits are one write; a relay publishes committed
 * messages later.
 *
 * <p>Atomic step: the append is a row written through the caller's unit of work, nothing else; it commits or rolls
 * back with the effect. The returned id is the message id the relay publishes with, every time it publishes it, so a
 * republish after a crash is absorbed by the consumer's inbox.
 *
 * <p>Order: messages of one ordering key are published in the order their units of work committed, one at a time. An
 * append holds a lock on its ordering key until its unit of work ends, so concurrent units of work appending to one
 * key wait for each other: append as late in the unit of work as you can. A unit of work that appends to several keys
 * takes their locks in the order it appends: two that take them in opposite orders deadlock, and the store aborts one
 * (a {@link StoreUnavailableException}; a consumer's delivery is retried, nothing is lost or doubled, work is
 * wasted). Use {@link #appendAll} for several keys: a store takes their locks in one consistent order (PostgreSQL: all
 * at once, in the order of the locks themselves; this interface's default: in key order, which two keys whose locks
 * collide can still defeat). Thread-safe.
 *
 * @param <U> the unit of work the append joins
 */
public interface Outbox<U extends UnitOfWork> {

    /**
     * Appends {@code message} inside {@code work}.
     *
     * @return the message id it will be published with
     * @throws StoreUnavailableException when the store failed; the caller's unit of work should not commit
     */
    String append(U work, OutboxMessage message);

    /**
     * Appends several messages inside {@code work}, taking their keys' locks in one consistent order so that two units
     * of work doing this do not deadlock on each other (this default: key order; stores override it where the lock
     * order differs); messages of one key keep the order they have in {@code messages}.
     *
     * @return the message ids, in the order of {@code messages}
     */
    default java.util.List<String> appendAll(U work, java.util.List<OutboxMessage> messages) {
        Integer[] order = new Integer[messages.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, java.util.Comparator.comparing(i -> messages.get(i).orderingKey())); // stable
        String[] ids = new String[messages.size()];
        for (int i : order) {
            ids[i] = append(work, messages.get(i));
        }
        return java.util.List.of(ids);
    }
}
