package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.OutboxStoreContract;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxStore;

/** The reference outbox passes the contract. */
class InMemoryOutboxStoreContractTest extends OutboxStoreContract {
    private final InMemoryOutboxStore store = new InMemoryOutboxStore();

    @Override
    protected OutboxStore newStore() {
        return store; // one outbox: a second relay instance shares it
    }

    @Override
    protected String appendCommitted(OutboxMessage message) {
        return store.append(message);
    }

    @Override
    protected void appendRolledBack(OutboxMessage message) {
        // nothing reaches the reference outbox from a unit of work that rolls back
    }
}
