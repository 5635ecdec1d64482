package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.OutboxStoreContract;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxStore;

/** The outbox contract against {@link KeyBlindOutboxStore}; run only by {@link ContractSuitesBiteTest}. */
public class BrokenKeyBlindOutboxSuite extends OutboxStoreContract {
    private final KeyBlindOutboxStore store = new KeyBlindOutboxStore();

    @Override
    protected OutboxStore newStore() {
        return store;
    }

    @Override
    protected String appendCommitted(OutboxMessage message) {
        return store.append(message);
    }

    @Override
    protected void appendRolledBack(OutboxMessage message) {
        // nothing reaches it
    }
}
