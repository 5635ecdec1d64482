package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Version;
import dev.idemkit.domain.versioned.Versioned;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.StoreUnavailableException;
import dev.idemkit.ports.out.VersionedStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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

    static final String UPSERT_IF_NEWER = """
            INSERT INTO %1$s AS t (%2$s, %3$s, %4$s) VALUES (?, ?, %5$s)
            ON CONFLICT (%2$s) DO UPDATE SET %3$s = excluded.%3$s, %6$s
            WHERE t.%3$s < excluded.%3$s
            """;
    static final String SELECT_VERSION = "SELECT %2$s FROM %1$s WHERE %3$s = ?";
    static final String SELECT_CURRENT = "SELECT %2$s, %3$s FROM %1$s WHERE %4$s = ?";

    private final PostgresDatabase db;
    private final VersionedTable<T> table;
    private final String upsert;
    private final String selectVersion;
    private final String selectCurrent;

    public PostgresVersionedStore(PostgresDatabase db, VersionedTable<T> table) {
        this.db = Objects.requireNonNull(db, "db");
        this.table = Objects.requireNonNull(table, "table");
        String t = Identifiers.quote(table.table());
        String id = Identifiers.quote(table.idColumn());
        String version = Identifiers.quote(table.versionColumn());
        ValueColumns<T> v = table.values();
        this.upsert = UPSERT_IF_NEWER.formatted(t, id, version, v.quotedList(), v.placeholders(), v.assignFromExcluded());
        this.selectVersion = SELECT_VERSION.formatted(t, version, id);
        this.selectCurrent = SELECT_CURRENT.formatted(t, version, v.quotedList(), id);
    }

    @Override
    public Outcome apply(VersionedEvent<T> event, Effect<? super JpaUnitOfWork, ?> onApplied) {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(onApplied, "onApplied");
        Outcome outcome = Transactions.run(db.entityManagerFactory(), "versioned write", unit -> {
            Connection c = unit.rawConnection();
            if (writeIfNewer(c, event)) {
                Transactions.effect(onApplied, unit);
                return Outcome.PROCESSED;
            }
            Optional<Version> stored = version(c, event.aggregateId());
            if (stored.isEmpty()) {
                throw new StoreUnavailableException("aggregate " + event.aggregateId()
                        + " conflicted yet vanished (deleted concurrently); retry", null);
            }
            return Versioned.decide(stored, event.version());
        });
        LOG.debug("versioned table={} aggregate={} version={} decision={}", table.table(), event.aggregateId(),
                event.version().value(), outcome);
        return outcome;
    }

    @Override
    public Optional<VersionedValue<T>> current(String aggregateId) {
        Objects.requireNonNull(aggregateId, "aggregateId");
        return Sql.inTransaction(db.dataSource(), "versioned read", c -> {
            try (PreparedStatement ps = c.prepareStatement(selectCurrent)) {
                ps.setString(1, aggregateId);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    return Optional.of(new VersionedValue<>(Version.of(rs.getLong(1)), table.values().reader().read(rs, 2)));
                }
            }
        });
    }

    private boolean writeIfNewer(Connection c, VersionedEvent<T> event) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(upsert)) {
            ps.setString(1, event.aggregateId());
            ps.setLong(2, event.version().value());
            table.values().binder().bind(ps, 3, event.value());
            return ps.executeUpdate() == 1;
        }
    }

    private Optional<Version> version(Connection c, String aggregateId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(selectVersion)) {
            ps.setString(1, aggregateId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(Version.of(rs.getLong(1))) : Optional.empty();
            }
        }
    }
}
