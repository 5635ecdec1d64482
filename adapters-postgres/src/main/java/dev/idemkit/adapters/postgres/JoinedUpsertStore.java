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
 * Creation by natural key in a user's table inside a transaction the CALLER owns: the same atomic step as
 * {@link PostgresUpsertStore} ({@code INSERT ... ON CONFLICT (key) DO NOTHING}) under a savepoint in the caller's
 * transaction ({@link Joined}). A duplicate inserts nothing and never aborts the caller's transaction.
 */
public final class JoinedUpsertStore<T> implements UpsertStore<T, JoinedUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(JoinedUpsertStore.class);

    private final CallerTransaction tx;
    private final UpsertStatements<T> sql;

    public JoinedUpsertStore(CallerTransaction tx, UpsertTable<T> table) {
        this.tx = Objects.requireNonNull(tx, "tx");
        this.sql = new UpsertStatements<>(table);
    }

    @Override
    public Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super JoinedUnitOfWork, ?> onInserted) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(onInserted, "onInserted");
        Outcome outcome = Joined.run(tx, "upsert insert", (c, unit) -> {
            boolean inserted = sql.insertIfAbsent(c, key, value);
            if (inserted) {
                Joined.effect(tx, onInserted, unit);
            }
            return Upsert.decide(!inserted);
        });
        LOG.debug("upsert table={} key={} decision={}", sql.tableName(), key, outcome);
        return outcome;
    }

    /** The value as the caller's transaction sees it. */
    @Override
    public Optional<T> find(NaturalKey key) {
        Objects.requireNonNull(key, "key");
        return Joined.run(tx, "upsert read", (c, unit) -> sql.find(c, key));
    }
}
