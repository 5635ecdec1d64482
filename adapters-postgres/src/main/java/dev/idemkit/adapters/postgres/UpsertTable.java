package dev.idemkit.adapters.postgres;

import java.util.Objects;

/**
 * A user's table keyed by a natural key (typically their own JPA entity's table) as {@link
 * PostgresUpsertStore} sees it: the table, the key column (text, unique) and the value columns.
 * Every identifier is validated against {@code [a-z_][a-z0-9_]*}.
 */
public record UpsertTable<T>(String table, String keyColumn, ValueColumns<T> values) {
    public UpsertTable {
        Identifiers.requireValidTable(table);
        Identifiers.requireValid("key column", keyColumn);
        Objects.requireNonNull(values, "values");
        if (values.names().contains(keyColumn)) {
            throw new IllegalArgumentException("the key column must not also be a value column");
        }
    }
}
