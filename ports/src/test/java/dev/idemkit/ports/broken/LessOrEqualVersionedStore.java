package dev.idemkit.ports.broken;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.VersionedStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * BROKEN on purpose: {@code UPDATE ... WHERE version <= ?} instead of {@code <}. Atomic, but a
 * redelivered event is applied again and its onApplied effect runs twice.
 */
public final class LessOrEqualVersionedStore<T> implements VersionedStore<T, InMemoryUnitOfWork> {
    private final Map<String, VersionedValue<T>> aggregates = new HashMap<>();

    @Override
    public synchronized Outcome apply(VersionedEvent<T> event, Effect<? super InMemoryUnitOfWork, ?> onApplied) {
        VersionedValue<T> stored = aggregates.get(event.aggregateId());
        if (stored != null && stored.version().isNewerThan(event.version())) {
            return Outcome.STALE;
        }
        InMemoryUnitOfWork.transact(onApplied,
                () -> aggregates.put(event.aggregateId(), new VersionedValue<>(event.version(), event.value())));
        return Outcome.PROCESSED;
    }

    @Override
    public synchronized Optional<VersionedValue<T>> current(String aggregateId) {
        return Optional.ofNullable(aggregates.get(aggregateId));
    }
}
