package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.upsert.Upsert;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.UpsertStore;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creation by natural key in a user's own table, described by an {@link UpsertTable}.
 *
 * <p>Atomic step: {@code INSERT ... ON CONFLICT (key) DO NOTHING}. One row: processed, and {@code
 * onInserted} runs in the same transaction; zero rows: duplicate ({@code Upsert.decide}). A
 * concurrent insert of the same key waits for the first transaction, so exactly one wins. Thread-safe.
 */
public final class PostgresUpsertStore<T> implements UpsertStore<T, JpaUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresUpsertStore.class);

    private final PostgresDatabase db;
    private final UpsertStatements<T> sql;

    public PostgresUpsertStore(PostgresDatabase db, UpsertTable<T> table) {
        this.db = Objects.requireNonNull(db, "db");
        this.sql = new UpsertStatements<>(table);
    }

    @Override
    public Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super JpaUnitOfWork, ?> onInserted) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(onInserted, "onInserted");
        Outcome outcome = Transactions.run(db, "upsert insert", unit -> {
            boolean inserted = sql.insertIfAbsent(unit.rawConnection(), key, value);
            if (inserted) {
                Transactions.effect(onInserted, unit);
            }
            return Upsert.decide(!inserted);
        });
        LOG.debug("upsert table={} key={} decision={}", sql.tableName(), key, outcome);
        return outcome;
    }

    @Override
    public Optional<T> find(NaturalKey key) {
        Objects.requireNonNull(key, "key");
        return Sql.inTransaction(db.dataSource(), "upsert read", c -> sql.find(c, key));
    }
}
