package dev.idemkit.ports.out;

/**
 * The producer side of idempotency: a message appended inside a unit of work is sent if and only if that unit of work
 * commits (DESIGN.md section 9). The effect and the events it emits are one write; a relay publishes committed
 * messages later.
 *
 * <p>Atomic step: the append is a row written through the caller's unit of work, nothing else; it commits or rolls
 * back with the effect. The returned id is the message id the relay publishes with, every time it publishes it, so a
 * republish after a crash is absorbed by the consumer's inbox.
 *
 * <p>Order: messages of one ordering key are published in the order their units of work committed, one at a time. An
 * append holds a lock on its ordering key until its unit of work ends, so concurrent units of work appending to one
 * key wait for each other: append as late in the unit of work as you can. Thread-safe.
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
}
