package dev.idemkit.adapters.postgres;

import java.util.Objects;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * idemkit's own tables ({@code processed_messages}, {@code idempotency_records}, {@code outbox_messages}), created or
 * brought up to date through Flyway with a history table of their own, {@value #HISTORY_TABLE}. Needs JDBC and Flyway
 * only: a service that uses the joined stores on its own data source runs without Hibernate or JPA. A service can
 * instead run them with its own Flyway: location {@value #LOCATION}, with a history table of their own (their versions
 * start at 1 and would collide with the service's in one history table).
 */
public final class PostgresMigrations {
    /** Where idemkit's migrations are on the class path. */
    public static final String LOCATION = "classpath:db/migration/idemkit";
    /** Their history table, apart from the service's own. */
    public static final String HISTORY_TABLE = "idemkit_schema_history";
    private static final Logger LOG = LoggerFactory.getLogger(PostgresMigrations.class);

    private PostgresMigrations() {}

    /** Applies idemkit's migrations (its tables, nothing of the caller's) to {@code schema}, creating it if missing. */
    public static void apply(DataSource dataSource, String schema) {
        Objects.requireNonNull(dataSource, "dataSource");
        Identifiers.quote(schema); // the same rule as every identifier: a clear error for a bad name
        migrate(dataSource, schema, new String[] {LOCATION}, HISTORY_TABLE);
    }

    /** Flyway on {@code schema} with {@code locations} and the history {@code table}. */
    static void migrate(DataSource ds, String schema, String[] locations, String table) {
        var result = Flyway.configure().dataSource(ds).schemas(schema).defaultSchema(schema).createSchemas(true)
                .locations(locations).table(table).baselineOnMigrate(true).baselineVersion("0")
                .load().migrate();
        LOG.info("migrations {} applied to schema {}: {}", String.join(",", locations), schema,
                result.migrationsExecuted);
    }
}
