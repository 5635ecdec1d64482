package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.UpsertStoreContract;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.UpsertStore;

/** The upsert contract against {@link OverwritingUpsertStore}; run only by {@link ContractSuitesBiteTest}. */
public class BrokenOverwritingUpsertSuite extends UpsertStoreContract<InMemoryUnitOfWork> {
    private final OverwritingUpsertStore<String> store = new OverwritingUpsertStore<>();
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
