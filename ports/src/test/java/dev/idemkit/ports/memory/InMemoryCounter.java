package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.EffectCounter;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/** Named counters written through an {@link InMemoryUnitOfWork}: an add is applied only on commit. Thread-safe. */
public final class InMemoryCounter implements EffectCounter<InMemoryUnitOfWork> {
    private final ConcurrentMap<String, Long> values = new ConcurrentHashMap<>();

    @Override
    public void add(InMemoryUnitOfWork work, String name, long amount) {
        work.onCommit(() -> values.merge(name, amount, Long::sum));
    }

    @Override
    public long read(String name) {
        return values.getOrDefault(name, 0L);
    }
}
