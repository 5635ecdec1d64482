package dev.idemkit.ports.out;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import java.util.Optional;

/**
 * Versioned state: an aggregate is replaced only by a strictly newer version.
 *
 * <p>Atomic step: a conditional write ({@code UPDATE ... WHERE id = ? AND version < ?}, creating the
 * aggregate when absent) whose affected-row count is the decision; {@code onApplied} runs in the same
 * unit of work only when the write happened. Thread-safe.
 */
public interface VersionedStore<T, U extends UnitOfWork> {

    /**
     * @return processed when the event's version was newer (or the aggregate new); duplicate when equal;
     *     stale when older — as {@code Versioned.decide} says
     * @throws StoreUnavailableException when the store failed; nothing was committed
     */
    Outcome apply(VersionedEvent<T> event, Effect<? super U, ?> onApplied);

    default Outcome apply(VersionedEvent<T> event) {
        return apply(event, work -> null);
    }

    Optional<VersionedValue<T>> current(String aggregateId);
}
