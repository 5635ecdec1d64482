package dev.idemkit.ports.contract;

import dev.idemkit.ports.out.UnitOfWork;

/**
 * A NON-idempotent effect that a store adapter offers to its contract suite: a named counter written
 * through the store's own unit of work, so that the suite can see whether an effect committed once,
 * twice or not at all.
 *
 * @param <U> the store's unit of work
 */
public interface EffectCounter<U extends UnitOfWork> {

    /** Adds {@code amount} to the counter {@code name} THROUGH the unit of work: commits or rolls back with the key. */
    void add(U work, String name, long amount) throws Exception;

    /** The committed value, 0 when the counter does not exist. */
    long read(String name);
}
