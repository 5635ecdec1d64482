package dev.idemkit.adapters.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * How a value of type {@code T} is stored in a user's table: the value columns, a binder that sets
 * one bind parameter per column, and a reader that reads them back in the same order. Column names
 * are validated identifiers; values are only ever bound, never put into SQL text.
 */
public record ValueColumns<T>(List<String> names, Binder<T> binder, Reader<T> reader) {

    /** Binds {@code value} to parameters {@code first .. first + names().size() - 1}. */
    @FunctionalInterface
    public interface Binder<T> {
        void bind(PreparedStatement ps, int first, T value) throws SQLException;
    }

    /** Reads a value from columns {@code first .. first + names().size() - 1} of the current row. */
    @FunctionalInterface
    public interface Reader<T> {
        T read(ResultSet rs, int first) throws SQLException;
    }

    public ValueColumns {
        names = List.copyOf(names);
        Objects.requireNonNull(binder, "binder");
        Objects.requireNonNull(reader, "reader");
        if (names.isEmpty()) {
            throw new IllegalArgumentException("at least one value column is needed");
        }
        names.forEach(n -> Identifiers.requireValid("value column", n));
        if (new HashSet<>(names).size() != names.size()) {
            throw new IllegalArgumentException("value columns must be distinct, got " + names);
        }
    }

    /** One {@code bigint} column holding a Long. */
    public static ValueColumns<Long> bigint(String column) {
        return new ValueColumns<>(List.of(column), (ps, i, v) -> ps.setLong(i, v), (rs, i) -> {
            long v = rs.getLong(i);
            return rs.wasNull() ? null : v;
        });
    }

    /** One {@code text} column holding a String. */
    public static ValueColumns<String> text(String column) {
        return new ValueColumns<>(List.of(column), (ps, i, v) -> {
            if (v == null) {
                ps.setNull(i, Types.VARCHAR);
            } else {
                ps.setString(i, v);
            }
        }, ResultSet::getString);
    }

    String quotedList() {
        return names.stream().map(Identifiers::quote).collect(Collectors.joining(", "));
    }

    String placeholders() {
        return names.stream().map(n -> "?").collect(Collectors.joining(", "));
    }

    String assignFromExcluded() {
        return names.stream().map(n -> Identifiers.quote(n) + " = excluded." + Identifiers.quote(n))
                .collect(Collectors.joining(", "));
    }
}
