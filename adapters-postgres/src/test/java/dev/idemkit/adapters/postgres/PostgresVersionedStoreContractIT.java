package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.VersionedStoreContract;
import dev.idemkit.ports.out.VersionedStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The versioned contract, unchanged, against PostgreSQL (the {@code product_prices} test entity's table). */
class PostgresVersionedStoreContractIT extends VersionedStoreContract<JpaUnitOfWork> {
    private static TestDatabase pg;
    private static PostgresVersionedStore<Long> store;
    private static AccountCounter counter;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(16);
        store = new PostgresVersionedStore<>(pg.db(), ProductPrice.table());
        counter = new AccountCounter(pg);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Override
    protected VersionedStore<Long, JpaUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<JpaUnitOfWork> counter() {
        return counter;
    }
}
