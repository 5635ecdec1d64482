package dev.idemkit.adapters.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * One test class's PostgreSQL: a fresh schema {@code idemkit_test_<random>} with idemkit's and the
 * test entities' migrations, dropped again on {@link #close()}. Settings from the environment
 * ({@code IDEMKIT_PG_URL}, ...), localhost defaults.
 */
final class TestDatabase implements AutoCloseable {
    static final String TEST_MIGRATIONS = "classpath:db/migration/idemkit-test";

    private final PostgresSettings settings;
    private final HikariDataSource pool;
    private final CountingDataSource counting;
    private final PostgresDatabase db;

    private TestDatabase(PostgresSettings settings) {
        this.settings = settings;
        this.pool = PostgresDatabase.createPool(settings);
        this.counting = new CountingDataSource(pool);
        try {
            this.db = PostgresDatabase.builder(settings).dataSource(counting)
                    .entities(Account.class, InventoryReservation.class, ProductPrice.class, Shipment.class)
                    .userMigrations(TEST_MIGRATIONS).start();
        } catch (RuntimeException e) {
            pool.close();
            dropSchema();
            throw e;
        }
    }

    static TestDatabase start() {
        return start(8);
    }

    static TestDatabase start(int poolSize) {
        String schema = TestPostgres.uniqueSchema("idemkit_test");
        return new TestDatabase(PostgresSettings.fromEnvironment().withSchema(schema).withPoolSize(poolSize));
    }

    PostgresDatabase db() {
        return db;
    }

    CountingDataSource counting() {
        return counting;
    }

    String schema() {
        return settings.schema();
    }

    /** A connection of the test pool (autocommit off, the test schema first on the search path); the caller closes it. */
    Connection connection() throws SQLException {
        return pool.getConnection();
    }

    /** Runs one statement (test set-up only) in the test schema. */
    void execute(String sql) {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The single long value of a query with bound string parameters. */
    long queryLong(String sql, String... params) {
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setString(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long v = rs.getLong(1);
                c.rollback();
                return v;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        db.close();
        pool.close();
        dropSchema();
    }

    private void dropSchema() {
        TestPostgres.dropSchema(settings.schema());
    }
}
