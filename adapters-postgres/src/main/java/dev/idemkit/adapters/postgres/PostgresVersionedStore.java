package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.VersionedStore;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Versioned state in a user's own table, described by a {@link VersionedTable}.
 *
 * <p>Atomic step: {@code INSERT ... ON CONFLICT (id) DO UPDATE SET version = excluded.version, ...
 * WHERE t.version < excluded.version}: it creates the row when absent and otherwise replaces it only
 * with a strictly newer version, the row lock serialising concurrent writers. One row: processed, and
 * {@code onApplied} runs in the same transaction. Zero rows: the stored version is read in the same
 * transaction and {@code Versioned.decide} says duplicate (equal) or stale (older). Thread-safe.
 */
public final class PostgresVersionedStore<T> implements VersionedStore<T, JpaUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresVersionedStore.class);

    private final PostgresDatabase db;
    private final VersionedStatements<T> sql;

    public PostgresVersionedStore(PostgresDatabase db, VersionedTable<T> table) {
        this.db = Objects.requireNonNull(db, "db");
        this.sql = new VersionedStatements<>(table);
    }

    @Override
    public Outcome apply(VersionedEvent<T> event, Effect<? super JpaUnitOfWork, ?> onApplied) {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(onApplied, "onApplied");
        Outcome outcome = Transactions.run(db, "versioned write",
                unit -> sql.apply(unit.rawConnection(), event, () -> Transactions.effect(onApplied, unit)));
        sql.log(LOG, event, outcome);
        return outcome;
    }

    @Override
    public Optional<VersionedValue<T>> current(String aggregateId) {
        Objects.requireNonNull(aggregateId, "aggregateId");
        return Sql.inTransaction(db.dataSource(), "versioned read", c -> sql.current(c, aggregateId));
    }
}
