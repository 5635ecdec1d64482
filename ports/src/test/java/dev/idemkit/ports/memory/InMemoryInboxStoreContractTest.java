package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.InboxStoreContract;
import dev.idemkit.ports.out.InboxStore;

class InMemoryInboxStoreContractTest extends InboxStoreContract<InMemoryUnitOfWork> {
    private final InMemoryInboxStore store = new InMemoryInboxStore();
    private final InMemoryCounter counter = new InMemoryCounter();

    @Override
    protected InboxStore<InMemoryUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<InMemoryUnitOfWork> counter() {
        return counter;
    }
}
