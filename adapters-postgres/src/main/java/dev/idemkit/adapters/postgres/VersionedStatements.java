package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Version;
import dev.idemkit.domain.versioned.Versioned;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * The versioned strategy's statements on a user's table, shared by the self-managed and the joined store: the
 * conditional upsert {@code INSERT ... ON CONFLICT (id) DO UPDATE ... WHERE t.version < excluded.version}, the read of
 * the stored version when it wrote nothing, the read of the current value.
 */
final class VersionedStatements<T> {
    static final String UPSERT_IF_NEWER = """
            INSERT INTO %1$s AS t (%2$s, %3$s, %4$s) VALUES (?, ?, %5$s)
            ON CONFLICT (%2$s) DO UPDATE SET %3$s = excluded.%3$s, %6$s
            WHERE t.%3$s < excluded.%3$s
            """;
    static final String SELECT_VERSION = "SELECT %2$s FROM %1$s WHERE %3$s = ?";
    static final String SELECT_CURRENT = "SELECT %2$s, %3$s FROM %1$s WHERE %4$s = ?";

    /** The effect, run in the same transaction once the write happened. */
    @FunctionalInterface
    interface OnApplied {
        void run() throws SQLException;
    }

    private final VersionedTable<T> table;
    private final String upsert;
    private final String selectVersion;
    private final String selectCurrent;

    VersionedStatements(VersionedTable<T> table) {
        this.table = Objects.requireNonNull(table, "table");
        String t = Identifiers.quote(table.table());
        String id = Identifiers.quote(table.idColumn());
        String version = Identifiers.quote(table.versionColumn());
        ValueColumns<T> v = table.values();
        this.upsert = UPSERT_IF_NEWER.formatted(t, id, version, v.quotedList(), v.placeholders(), v.assignFromExcluded());
        this.selectVersion = SELECT_VERSION.formatted(t, version, id);
        this.selectCurrent = SELECT_CURRENT.formatted(t, version, v.quotedList(), id);
    }

    /** The atomic step and, when it wrote, {@code onApplied}; otherwise the stored version decides. */
    Outcome apply(Connection c, VersionedEvent<T> event, OnApplied onApplied) throws SQLException {
        if (writeIfNewer(c, event)) {
            onApplied.run();
            return Outcome.PROCESSED;
        }
        Optional<Version> stored = version(c, event.aggregateId());
        if (stored.isEmpty()) {
            throw new StoreUnavailableException("aggregate " + event.aggregateId()
                    + " conflicted yet vanished (deleted concurrently); retry", null);
        }
        return Versioned.decide(stored, event.version());
    }

    Optional<VersionedValue<T>> current(Connection c, String aggregateId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(selectCurrent)) {
            ps.setString(1, aggregateId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new VersionedValue<>(Version.of(rs.getLong(1)), table.values().reader().read(rs, 2)));
            }
        }
    }

    void log(Logger log, VersionedEvent<T> event, Outcome outcome) {
        log.debug("versioned table={} aggregate={} version={} decision={}", table.table(), event.aggregateId(),
                event.version().value(), outcome);
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
