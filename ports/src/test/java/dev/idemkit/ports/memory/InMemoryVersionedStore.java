package dev.idemkit.ports.memory;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.versioned.Versioned;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.VersionedStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The reference versioned store. Atomic step: under the store's one lock, {@code Versioned.decide}
 * on the stored version; when newer, {@code onApplied} runs and the new value commits with its staged
 * writes — or nothing when it throws. Thread-safe.
 */
public final class InMemoryVersionedStore<T> implements VersionedStore<T, InMemoryUnitOfWork> {
    private final Object lock = new Object();
    private final Map<String, VersionedValue<T>> aggregates = new HashMap<>();

    @Override
    public Outcome apply(VersionedEvent<T> event, Effect<? super InMemoryUnitOfWork, ?> onApplied) {
        synchronized (lock) {
            Outcome outcome = Versioned.decide(
                    Optional.ofNullable(aggregates.get(event.aggregateId())).map(VersionedValue::version),
                    event.version());
            if (outcome.effectRan()) {
                InMemoryUnitOfWork.transact(onApplied, () -> aggregates.put(event.aggregateId(),
                        new VersionedValue<>(event.version(), event.value())));
            }
            return outcome;
        }
    }

    @Override
    public Optional<VersionedValue<T>> current(String aggregateId) {
        synchronized (lock) {
            return Optional.ofNullable(aggregates.get(aggregateId));
        }
    }
}
