package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.upsert.Upsert;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.UpsertStore;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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

    static final String INSERT_IF_ABSENT = """
            INSERT INTO %1$s (%2$s, %3$s) VALUES (?, %4$s)
            ON CONFLICT (%2$s) DO NOTHING
            """;
    static final String SELECT_VALUE = "SELECT %2$s FROM %1$s WHERE %3$s = ?";

    private final PostgresDatabase db;
    private final UpsertTable<T> table;
    private final String insert;
    private final String select;

    public PostgresUpsertStore(PostgresDatabase db, UpsertTable<T> table) {
        this.db = Objects.requireNonNull(db, "db");
        this.table = Objects.requireNonNull(table, "table");
        String t = Identifiers.quote(table.table());
        String key = Identifiers.quote(table.keyColumn());
        this.insert = INSERT_IF_ABSENT.formatted(t, key, table.values().quotedList(), table.values().placeholders());
        this.select = SELECT_VALUE.formatted(t, table.values().quotedList(), key);
    }

    @Override
    public Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super JpaUnitOfWork, ?> onInserted) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(onInserted, "onInserted");
        Outcome outcome = Transactions.run(db.entityManagerFactory(), "upsert insert", unit -> {
            boolean inserted;
            try (PreparedStatement ps = unit.rawConnection().prepareStatement(insert)) {
                ps.setString(1, key.value());
                table.values().binder().bind(ps, 2, value);
                inserted = ps.executeUpdate() == 1;
            }
            if (inserted) {
                Transactions.effect(onInserted, unit);
            }
            return Upsert.decide(!inserted);
        });
        LOG.debug("upsert table={} key={} decision={}", table.table(), key, outcome);
        return outcome;
    }

    @Override
    public Optional<T> find(NaturalKey key) {
        Objects.requireNonNull(key, "key");
        return Sql.inTransaction(db.dataSource(), "upsert read", c -> {
            try (PreparedStatement ps = c.prepareStatement(select)) {
                ps.setString(1, key.value());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.ofNullable(table.values().reader().read(rs, 1)) : Optional.empty();
                }
            }
        });
    }
}
