package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.VersionedStoreContract;
import dev.idemkit.ports.out.VersionedStore;

class InMemoryVersionedStoreContractTest extends VersionedStoreContract<InMemoryUnitOfWork> {
    private final InMemoryVersionedStore<Long> store = new InMemoryVersionedStore<>();
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
