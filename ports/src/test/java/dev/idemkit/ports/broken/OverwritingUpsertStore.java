package dev.idemkit.ports.broken;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.UpsertStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * BROKEN on purpose: {@code INSERT ... ON CONFLICT DO UPDATE} where {@code DO NOTHING} was meant.
 * Every insert "affects one row": the last write wins and onInserted runs for every duplicate.
 */
public final class OverwritingUpsertStore<T> implements UpsertStore<T, InMemoryUnitOfWork> {
    private final Map<NaturalKey, T> entities = new HashMap<>();

    @Override
    public synchronized Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super InMemoryUnitOfWork, ?> onInserted) {
        InMemoryUnitOfWork.transact(onInserted, () -> entities.put(key, value));
        return Outcome.PROCESSED;
    }

    @Override
    public synchronized Optional<T> find(NaturalKey key) {
        return Optional.ofNullable(entities.get(key));
    }
}
