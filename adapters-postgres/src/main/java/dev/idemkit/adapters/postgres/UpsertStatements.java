package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.NaturalKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;

/**
 * The upsert strategy's statements on a user's table, shared by the self-managed and the joined store: the
 * insert-if-absent {@code INSERT ... ON CONFLICT (key) DO NOTHING} and the read by key.
 */
final class UpsertStatements<T> {
    static final String INSERT_IF_ABSENT = """
            INSERT INTO %1$s (%2$s, %3$s) VALUES (?, %4$s)
            ON CONFLICT (%2$s) DO NOTHING
            """;
    static final String SELECT_VALUE = "SELECT %2$s FROM %1$s WHERE %3$s = ?";

    private final UpsertTable<T> table;
    private final String insert;
    private final String select;

    UpsertStatements(UpsertTable<T> table) {
        this.table = Objects.requireNonNull(table, "table");
        String t = Identifiers.quote(table.table());
        String key = Identifiers.quote(table.keyColumn());
        this.insert = INSERT_IF_ABSENT.formatted(t, key, table.values().quotedList(), table.values().placeholders());
        this.select = SELECT_VALUE.formatted(t, table.values().quotedList(), key);
    }

    String tableName() {
        return table.table();
    }

    /** Whether this statement inserted the row (false: the key was there). */
    boolean insertIfAbsent(Connection c, NaturalKey key, T value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insert)) {
            ps.setString(1, key.value());
            table.values().binder().bind(ps, 2, value);
            return ps.executeUpdate() == 1;
        }
    }

    Optional<T> find(Connection c, NaturalKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(select)) {
            ps.setString(1, key.value());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.ofNullable(table.values().reader().read(rs, 1)) : Optional.empty();
            }
        }
    }
}
