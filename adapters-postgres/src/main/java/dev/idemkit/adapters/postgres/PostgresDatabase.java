package dev.idemkit.adapters.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceUnitTransactionType;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.hibernate.tool.schema.Action;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * idemkit's PostgreSQL stack without any framework: a HikariCP pool (auto-commit off), idemkit's
 * Flyway migrations ({@code classpath:db/migration/idemkit}, history table {@code
 * idemkit_schema_history}) applied to the configured schema, and a Hibernate 7 entity manager factory
 * over the caller's entity classes (validated against the schema, or not checked). Owns and closes
 * what it created. Thread-safe.
 *
 * <p>With entity classes the factory is built in {@link Builder#start()}, so that a mapping the schema does not
 * match fails the start. Without any (idemkit's own stores run plain SQL) it is built on first use, by
 * {@link #entityManagerFactory()} or the first effect that asks for an entity manager: a process that never uses JPA,
 * such as {@code serve}, does not pay Hibernate's start-up (about 1.5 s here).
 */
public final class PostgresDatabase implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresDatabase.class);

    /** Whether Hibernate checks the caller's entities against the tables at start-up. */
    public enum SchemaCheck { VALIDATE, NONE }

    private final DataSource dataSource;
    private final AutoCloseable ownedPool;
    private final java.util.function.Supplier<EntityManagerFactory> factory;
    private final String schema;
    private final PostgresSettings settings;
    private EntityManagerFactory emf; // guarded by this
    private boolean closed; // guarded by this

    private PostgresDatabase(DataSource dataSource, AutoCloseable ownedPool,
            java.util.function.Supplier<EntityManagerFactory> factory, PostgresSettings settings) {
        this.dataSource = dataSource;
        this.ownedPool = ownedPool;
        this.factory = factory;
        this.schema = settings.schema();
        this.settings = settings;
    }

    /**
     * A connection of its own, outside the pool (auto-commit on, search path on the schema), for a session that stays
     * open for good, such as a {@code LISTEN}: taken from the pool it would be one connection fewer for the work, for
     * ever, and with a pool of one, none. Opened from the settings (also when the database was given a data source of
     * the caller's), with connect, login and socket timeouts. The caller closes it.
     */
    Connection openUnpooled() throws java.sql.SQLException {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("user", settings.user());
        p.setProperty("password", settings.password());
        p.setProperty("currentSchema", settings.schema());
        p.setProperty("ApplicationName", "idemkit-outbox-listen");
        // never block for good on a connection that died silently: a relay waiting on it would wait with it
        p.setProperty("connectTimeout", "10");
        p.setProperty("loginTimeout", "10");
        p.setProperty("socketTimeout", "60");
        p.setProperty("tcpKeepAlive", "true");
        return java.sql.DriverManager.getConnection(settings.url(), p);
    }

    /** {@link PostgresMigrations#apply}, which needs neither Hibernate nor JPA: prefer it. */
    public static void applyMigrations(DataSource dataSource, String schema) {
        PostgresMigrations.apply(dataSource, schema);
    }

    /** Starts a configuration; nothing connects before {@link Builder#start()}. */
    public static Builder builder(PostgresSettings settings) {
        return new Builder(settings);
    }

    /**
     * A pool for the settings: auto-commit off (Hibernate is told so), search path set to the schema.
     * {@link Builder#start()} makes one unless given a data source.
     *
     * <p>The search path travels in the connection's start-up parameters (pgjdbc's {@code currentSchema}), not as a
     * {@code SET} statement: with auto-commit off a {@code SET} belongs to the connection's first transaction, and a
     * first transaction that rolls back (an effect that failed) would silently put the connection back on
     * {@code "$user", public} for the rest of its life.
     */
    public static HikariDataSource createPool(PostgresSettings s) {
        String url = s.url().toLowerCase(java.util.Locale.ROOT);
        if (url.contains("currentschema=") || url.contains("search_path")) {
            // the URL's parameters would win over the schema set here, silently: one place only
            throw new IllegalArgumentException("the JDBC URL sets a schema (currentSchema / search_path): give it as"
                    + " the schema setting instead, got " + s.url().replaceAll("password=[^&]*", "password=***"));
        }
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(s.url());
        c.setUsername(s.user());
        c.setPassword(s.password());
        c.addDataSourceProperty("currentSchema", s.schema());
        c.setMaximumPoolSize(s.poolSize());
        c.setAutoCommit(false);
        c.setPoolName("idemkit-pg-" + s.schema());
        // what pg_stat_activity shows for these connections (an operator counting who holds the server's slots)
        c.addDataSourceProperty("ApplicationName", "idemkit-pg-" + s.schema());
        return new HikariDataSource(c);
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * A pooled connection, waiting at most {@code waitMillis} for one when the pool is idemkit's HikariCP pool (a
     * data source of the caller's waits as it is configured to): a bound that a request's answer must keep counts the
     * wait for a connection too.
     */
    java.sql.Connection connection(long waitMillis) throws java.sql.SQLException {
        if (dataSource instanceof HikariDataSource hikari
                && hikari.getHikariPoolMXBean() instanceof com.zaxxer.hikari.pool.HikariPool pool) {
            return pool.getConnection(Math.max(1, waitMillis));
        }
        return dataSource.getConnection();
    }

    /** The entity manager factory over the caller's entities; built now if it was not yet (see the class comment). */
    public synchronized EntityManagerFactory entityManagerFactory() {
        if (closed) {
            throw new IllegalStateException("the PostgreSQL database of schema " + schema + " is closed");
        }
        if (emf == null) {
            emf = factory.get();
        }
        return emf;
    }

    /** Whether the entity manager factory has been built (it is on first use when there are no entities). */
    synchronized boolean entityManagerFactoryBuilt() {
        return emf != null;
    }

    /** Hibernate's view of the factory: the stores open a session on their own connection only when asked to. */
    SessionFactory sessionFactory() {
        return entityManagerFactory().unwrap(SessionFactory.class);
    }

    public String schema() {
        return schema;
    }

    /**
     * Runs {@code work} in one transaction and commits it; rolls back when it throws or marked the
     * unit of work rollback-only. The effect's exceptions come back as they are (checked ones wrapped
     * in {@link EffectFailedException}); a failing commit as a StoreUnavailableException.
     */
    public <R> R inTransaction(Effect<? super JpaUnitOfWork, R> work) {
        return Transactions.run(this, "transaction", unit -> Transactions.work(work, unit));
    }

    @Override
    public void close() {
        EntityManagerFactory built;
        synchronized (this) {
            closed = true;
            built = emf;
        }
        if (built != null) {
            built.close();
        }
        if (ownedPool != null) {
            try {
                ownedPool.close();
            } catch (Exception e) {
                LOG.warn("closing the pool failed: {}", e.toString());
            }
        }
    }

    /** Options for {@link PostgresDatabase}. */
    public static final class Builder {
        private final PostgresSettings settings;
        private final List<Class<?>> entities = new ArrayList<>();
        private final List<String> userMigrations = new ArrayList<>();
        private SchemaCheck check = SchemaCheck.VALIDATE;
        private DataSource external;

        private Builder(PostgresSettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
        }

        /** The caller's JPA entity classes (idemkit brings none of its own). */
        public Builder entities(Class<?>... classes) {
            entities.addAll(List.of(classes));
            return this;
        }

        public Builder schemaCheck(SchemaCheck c) {
            this.check = Objects.requireNonNull(c, "check");
            return this;
        }

        /** The caller's own Flyway locations, applied after idemkit's with the default history table. */
        public Builder userMigrations(String... locations) {
            userMigrations.addAll(List.of(locations));
            return this;
        }

        /**
         * Use this data source (auto-commit off, search path on the schema) instead of creating a pool; not closed by
         * us. Put the schema in the connections' start-up parameters (pgjdbc's {@code currentSchema}), never in a
         * {@code SET} run with auto-commit off (see {@link #createPool}).
         */
        public Builder dataSource(DataSource ds) {
            this.external = Objects.requireNonNull(ds, "dataSource");
            return this;
        }

        public PostgresDatabase start() {
            HikariDataSource owned = external == null ? createPool(settings) : null;
            DataSource ds = external == null ? owned : external;
            try {
                migrate(ds, PostgresMigrations.LOCATION, PostgresMigrations.HISTORY_TABLE);
                if (!userMigrations.isEmpty()) {
                    // the schema already holds idemkit's tables: the caller's history starts empty at version 0
                    migrate(ds, userMigrations.toArray(String[]::new), "flyway_schema_history");
                }
                List<Class<?>> mapped = List.copyOf(entities);
                SchemaCheck mappedCheck = check;
                java.util.function.Supplier<EntityManagerFactory> factory =
                        () -> entityManagerFactory(settings, ds, mapped, mappedCheck);
                PostgresDatabase db = new PostgresDatabase(ds, owned, factory, settings);
                if (!entities.isEmpty()) {
                    db.entityManagerFactory(); // now: a mapping the schema does not match fails the start
                }
                LOG.info("postgres ready: {} entities={} check={}", settings, entities.size(), check);
                return db;
            } catch (RuntimeException e) {
                if (owned != null) {
                    owned.close();
                }
                throw e;
            }
        }

        private static EntityManagerFactory entityManagerFactory(PostgresSettings settings, DataSource ds,
                List<Class<?>> entities, SchemaCheck check) {
            return new HibernatePersistenceConfiguration("idemkit-" + settings.schema())
                    .managedClasses(entities)
                    .transactionType(PersistenceUnitTransactionType.RESOURCE_LOCAL)
                    .property(AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, ds)
                    .property(AvailableSettings.CONNECTION_PROVIDER_DISABLES_AUTOCOMMIT, true)
                    .property(AvailableSettings.DEFAULT_SCHEMA, settings.schema())
                    .schemaToolingAction(check == SchemaCheck.VALIDATE ? Action.VALIDATE : Action.NONE)
                    .createEntityManagerFactory();
        }

        private void migrate(DataSource ds, String location, String table) {
            migrate(ds, new String[] {location}, table);
        }

        private void migrate(DataSource ds, String[] locations, String table) {
            PostgresMigrations.migrate(ds, settings.schema(), locations, table);
        }
    }
}
