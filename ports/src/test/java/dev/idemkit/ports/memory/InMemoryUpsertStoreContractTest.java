package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.UpsertStoreContract;
import dev.idemkit.ports.out.UpsertStore;

class InMemoryUpsertStoreContractTest extends UpsertStoreContract<InMemoryUnitOfWork> {
    private final InMemoryUpsertStore<String> store = new InMemoryUpsertStore<>();
    private final InMemoryCounter counter = new InMemoryCounter();

    @Override
    protected UpsertStore<String, InMemoryUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<InMemoryUnitOfWork> counter() {
        return counter;
    }
}
