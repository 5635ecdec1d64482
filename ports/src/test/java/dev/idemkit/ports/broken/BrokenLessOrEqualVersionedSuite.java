package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.VersionedStoreContract;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.VersionedStore;

/** The versioned contract against {@link LessOrEqualVersionedStore}; run only by {@link ContractSuitesBiteTest}. */
public class BrokenLessOrEqualVersionedSuite extends VersionedStoreContract<InMemoryUnitOfWork> {
    private final LessOrEqualVersionedStore<Long> store = new LessOrEqualVersionedStore<>();
    private final InMemoryCounter counter = new InMemoryCounter();

    @Override
    protected VersionedStore<Long, InMemoryUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<InMemoryUnitOfWork> counter() {
        return counter;
    }
}
