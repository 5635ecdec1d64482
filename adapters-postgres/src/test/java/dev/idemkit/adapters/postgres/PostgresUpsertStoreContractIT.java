package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.UpsertStoreContract;
import dev.idemkit.ports.out.UpsertStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The upsert contract, unchanged, against PostgreSQL (the {@code shipments} test entity's table). */
class PostgresUpsertStoreContractIT extends UpsertStoreContract<JpaUnitOfWork> {
    private static TestDatabase pg;
    private static PostgresUpsertStore<String> store;
    private static AccountCounter counter;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(16);
        store = new PostgresUpsertStore<>(pg.db(), Shipment.table());
        counter = new AccountCounter(pg);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Override
    protected UpsertStore<String, JpaUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<JpaUnitOfWork> counter() {
        return counter;
    }
}
