package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.OutboxStoreContract;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxStore;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** The outbox contract against PostgreSQL, appends in idemkit's unit of work. */
class PostgresOutboxStoreContractIT extends OutboxStoreContract {
    private static TestDatabase pg;
    private static PostgresOutbox outbox;
    private final List<PostgresOutboxStore> stores = new ArrayList<>();

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
        outbox = new PostgresOutbox(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @BeforeEach
    void empty() {
        pg.execute("DELETE FROM outbox_messages");
    }

    @AfterEach
    void closeStores() {
        stores.forEach(PostgresOutboxStore::close);
    }

    @Override
    protected OutboxStore newStore() {
        PostgresOutboxStore s = new PostgresOutboxStore(pg.db());
        stores.add(s);
        return s;
    }

    @Override
    protected String appendCommitted(OutboxMessage message) {
        return pg.db().inTransaction(work -> outbox.append(work, message));
    }

    @Override
    protected void appendRolledBack(OutboxMessage message) {
        pg.db().inTransaction(work -> {
            outbox.append(work, message);
            work.setRollbackOnly();
            return null;
        });
    }
}
