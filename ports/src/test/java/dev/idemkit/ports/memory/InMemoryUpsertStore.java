package dev.idemkit.ports.memory;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.upsert.Upsert;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.UpsertStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The reference upsert store. Atomic step: under the store's one lock, insert-if-absent; when
 * inserted, {@code onInserted} runs and the row commits with its staged writes — or nothing when it
 * throws. Thread-safe.
 */
public final class InMemoryUpsertStore<T> implements UpsertStore<T, InMemoryUnitOfWork> {
    private final Object lock = new Object();
    private final Map<NaturalKey, T> entities = new HashMap<>();

    @Override
    public Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super InMemoryUnitOfWork, ?> onInserted) {
        synchronized (lock) {
            Outcome outcome = Upsert.decide(entities.containsKey(key));
            if (outcome.effectRan()) {
                InMemoryUnitOfWork.transact(onInserted, () -> entities.put(key, value));
            }
            return outcome;
        }
    }

    @Override
    public Optional<T> find(NaturalKey key) {
        synchronized (lock) {
            return Optional.ofNullable(entities.get(key));
        }
    }
}
