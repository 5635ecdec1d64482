package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.InboxStoreContract;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.InboxStore;

/** The inbox contract against {@link BatchRunsEveryDeliveryInboxStore}; run only by {@link ContractSuitesBiteTest} (no Test suffix). */
public class BrokenBatchRunsEveryDeliveryInboxSuite extends InboxStoreContract<InMemoryUnitOfWork> {
    private final BatchRunsEveryDeliveryInboxStore store = new BatchRunsEveryDeliveryInboxStore();
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
