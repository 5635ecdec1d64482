package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.InboxStoreContract;
import dev.idemkit.ports.out.InboxStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The inbox contract, unchanged, against PostgreSQL. */
class PostgresInboxStoreContractIT extends InboxStoreContract<JpaUnitOfWork> {
    private static TestDatabase pg;
    private static PostgresInboxStore store;
    private static AccountCounter counter;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(16);
        store = new PostgresInboxStore(pg.db());
        counter = new AccountCounter(pg);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Override
    protected InboxStore<JpaUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<JpaUnitOfWork> counter() {
        return counter;
    }
}
