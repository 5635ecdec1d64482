package dev.idemkit.domain;

/**
 * What happened to one delivery. Expected outcomes are values, not exceptions.
 *
 * <ul>
 *   <li>{@link Processed}: the effect ran (and, in a store, committed with the key);</li>
 *   <li>{@link Duplicate}: the effect had already happened; nothing ran;</li>
 *   <li>{@link Stale}: a newer version was already applied; nothing ran;</li>
 *   <li>{@link Rejected}: the delivery must not run and must not be retried (it is dead-lettered with the reason).</li>
 * </ul>
 */
public sealed interface Outcome {
    Processed PROCESSED = new Processed();
    Duplicate DUPLICATE = new Duplicate();
    Stale STALE = new Stale();

    /** True only for {@link Processed}: the effect ran in this call. */
    default boolean effectRan() {
        return this instanceof Processed;
    }

    record Processed() implements Outcome {}

    record Duplicate() implements Outcome {}

    record Stale() implements Outcome {}

    record Rejected(String reason) implements Outcome {
        public Rejected {
            if (reason == null || reason.isBlank()) {
                throw new IllegalArgumentException("a rejection needs a reason");
            }
        }
    }

    static Rejected rejected(String reason) {
        return new Rejected(reason);
    }
}
