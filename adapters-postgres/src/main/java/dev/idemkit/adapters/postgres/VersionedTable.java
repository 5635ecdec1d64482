package dev.idemkit.adapters.postgres;

import java.util.HashSet;
import java.util.Objects;

/**
 * A user's versioned table (typically the table of their own JPA entity) as {@link
 * PostgresVersionedStore} sees it: the table, the id column (text, unique), the version column
 * (bigint) and the value columns. Every identifier is validated against {@code [a-z_][a-z0-9_]*}.
 */
public record VersionedTable<T>(String table, String idColumn, String versionColumn, ValueColumns<T> values) {
    public VersionedTable {
        Identifiers.requireValidTable(table);
        Identifiers.requireValid("id column", idColumn);
        Identifiers.requireValid("version column", versionColumn);
        Objects.requireNonNull(values, "values");
        var all = new HashSet<>(values.names());
        if (!all.add(idColumn) || !all.add(versionColumn)) {
            throw new IllegalArgumentException("id, version and value columns must be distinct");
        }
    }
}
