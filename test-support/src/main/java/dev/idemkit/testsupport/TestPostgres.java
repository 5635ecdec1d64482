package dev.idemkit.testsupport;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The machine's PostgreSQL as the tests reach it: {@code IDEMKIT_PG_URL}, {@code IDEMKIT_PG_USER} and
 * {@code IDEMKIT_PG_PASSWORD} (the variables the app reads), with the local defaults (database {@code test}, user
 * {@code postgres}, trust auth). A test works in a schema of its own ({@link #uniqueSchema}) and drops it
 * ({@link #dropSchema}); the database's other schemas are never touched.
 */
public final class TestPostgres {
    public static final String URL = env("IDEMKIT_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    public static final String USER = env("IDEMKIT_PG_USER", "postgres");
    public static final String PASSWORD = env("IDEMKIT_PG_PASSWORD", "");

    private TestPostgres() {}

    /** A fresh schema name, {@code <prefix>_<12 hex>}; {@code prefix} is lowercase letters, digits and underscores. */
    public static String uniqueSchema(String prefix) {
        String name = Names.unique(prefix);
        checkName(name);
        return name;
    }

    /** A connection outside any pool (auto-commit on); the caller closes it. */
    public static Connection connect() throws SQLException {
        return DriverManager.getConnection(URL, USER, PASSWORD);
    }

    /** {@code DROP SCHEMA IF EXISTS <schema> CASCADE}, for a name {@link #uniqueSchema} could have made. */
    public static void dropSchema(String schema) {
        checkName(schema);
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (SQLException e) {
            throw new IllegalStateException("could not drop test schema " + schema + ": " + e.getMessage(), e);
        }
    }

    private static void checkName(String schema) {
        if (!schema.matches("[a-z_][a-z0-9_]{0,62}")) {
            throw new IllegalArgumentException("not a test schema name (lowercase letters, digits, _): " + schema);
        }
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v;
    }
}
