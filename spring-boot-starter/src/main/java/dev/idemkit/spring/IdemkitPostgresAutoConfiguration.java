package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.adapters.postgres.PostgresMigrations;
import dev.idemkit.adapters.postgres.PostgresRetention;
import dev.idemkit.spring.IdemkitAutoConfiguration.IdemkitSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * With a {@link DataSource} and idemkit-adapters-postgres: idemkit's tables (unless
 * {@code idemkit.postgres.migrations=none}), checked to be on the data source's search path, and an
 * {@link IdempotentInbox} that joins the service's transactions.
 */
@AutoConfiguration(after = IdemkitAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration"})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnClass(JoinedInboxStore.class)
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitPostgresAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitPostgresAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    IdemkitSchema idemkitSchema(DataSource dataSource, IdemkitProperties properties) {
        String schema = Optional.ofNullable(properties.getPostgres().getSchema()).orElseGet(() -> current(dataSource));
        if (properties.getPostgres().getMigrations() == IdemkitProperties.Migrations.IDEMKIT) {
            requireReachable(dataSource, schema); // before any DDL: a start it refuses leaves nothing behind
            PostgresMigrations.apply(dataSource, schema);
        } else {
            LOG.info("idemkit migrations left to the service (idemkit.postgres.migrations=none), schema {}", schema);
        }
        requireVisible(dataSource, schema);
        return new IdemkitSchema(schema);
    }

    @Bean
    @ConditionalOnMissingBean
    IdempotentInbox idempotentInbox(DataSource dataSource, IdemkitSchema schema, InboxMeters meters) {
        LOG.info("idemkit inbox joins the service's transactions on schema {}: exactly-once effect for writes in"
                + " the same transaction", schema.name());
        return new IdempotentInbox(new JoinedInboxStore(new SpringCallerTransaction(dataSource)), meters);
    }

    /**
     * Retention of idemkit's tables ({@code idemkit.retention.*}), the same loop as {@code idemkit serve}'s. Refused at
     * start-up: a dedup window shorter than the idempotent listeners' retries (a retried message could come back
     * after its key was deleted and run again), and a policy outside its bounds, naming the property.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "idemkit.retention", name = "enabled", matchIfMissing = true)
    IdemkitRetention idemkitRetention(DataSource dataSource, IdemkitSchema schema, IdemkitProperties properties,
            RetentionMeters meters) {
        IdemkitProperties.Retention r = properties.getRetention();
        PostgresRetention.Policy policy;
        try {
            policy = new PostgresRetention.Policy(r.getInbox(), r.getSentOutbox(), r.getBatchSize(), r.getPause(),
                    r.getDutyCycle());
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new StartupRefusal("idemkit.retention.*: " + e.getMessage() + " (inbox, sent-outbox and pause are"
                    + " durations, batch-size 1 to 100000, duty-cycle in (0, 1])", e);
        }
        if (r.getEvery() == null || r.getEvery().toMillis() < 1) {
            throw new StartupRefusal("idemkit.retention.every must be at least 1ms, got " + r.getEvery());
        }
        Duration horizon = properties.getRetry().toPolicy().longestRetryHorizon();
        if (policy.inbox().isZero() || policy.inbox().compareTo(horizon) < 0) {
            throw new StartupRefusal("idemkit.retention.inbox " + policy.inbox() + " is shorter than the idempotent"
                    + " listeners' longest retry horizon " + horizon + " (idemkit.retry.*): a message retried after its"
                    + " key was deleted would run again; keep the dedup window longer than every way a message can"
                    + " come back, dead letters you may redrive included");
        }
        LOG.info("idemkit retention of the tables in schema {} every {}: inbox keys kept {}, sent outbox rows {},"
                + " expired Idempotency-Key records deleted; {} rows per batch, working at most {}% of the time",
                schema.name(), IdemkitRetention.human(r.getEvery()), IdemkitRetention.human(policy.inbox()),
                IdemkitRetention.human(policy.sentOutbox()), policy.batchSize(),
                Math.round(policy.dutyCycle() * 100));
        return new IdemkitRetention(new PostgresRetention(dataSource), policy, r.getEvery(), meters);
    }

    /**
     * idemkit's statements name its tables unqualified: the data source's search path must find them in the schema
     * they are in, or every key would fail (or land in another schema's table of the same name).
     */
    private static void requireVisible(DataSource dataSource, String schema) {
        try (Connection c = dataSource.getConnection()) {
            String found = whereTheSearchPathFindsTheInbox(c);
            if (!schema.equals(found)) {
                throw unreachable(schema, found);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("idemkit could not check where its tables are", e);
        }
    }

    /**
     * Before idemkit creates anything: once its tables are in {@code schema}, the search path will find them there.
     * PostgreSQL answers that itself, in a transaction that creates the schema and an empty table of that name where
     * they are missing, asks {@code to_regclass}, and is rolled back: no parsing of the search path (quoted names, case
     * folding, {@code $user}), and an earlier table of that name in another schema on the path counts as it would.
     * Needs the CREATE rights the migrations need. With {@code idemkit.postgres.migrations=none} nothing is created,
     * and only {@link #requireVisible} runs.
     */
    private static void requireReachable(DataSource dataSource, String schema) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                // only what is missing: CREATE ... IF NOT EXISTS checks the right to create before it looks, and a
                // role without it runs fine on a schema and tables a DBA made
                String quoted = "\"" + schema.replace("\"", "\"\"") + "\"";
                if (!exists(c, "SELECT 1 FROM pg_namespace WHERE nspname = ?", schema)) {
                    st.execute("CREATE SCHEMA " + quoted);
                }
                if (!exists(c, "SELECT 1 FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace"
                        + " WHERE n.nspname = ? AND t.relname = 'processed_messages'", schema)) {
                    st.execute("CREATE TABLE " + quoted + ".processed_messages ()");
                }
                String found = whereTheSearchPathFindsTheInbox(c);
                if (!schema.equals(found)) {
                    throw unreachable(schema, found);
                }
            } finally {
                c.rollback();
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("idemkit could not check where its tables would be", e);
        }
    }

    private static boolean exists(Connection c, String sql, String schema) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** The schema of the {@code processed_messages} the connection's search path finds; null when it finds none. */
    private static String whereTheSearchPathFindsTheInbox(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT n.nspname FROM pg_class t JOIN pg_namespace n"
                + " ON n.oid = t.relnamespace WHERE t.oid = to_regclass('processed_messages')");
                ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static StartupRefusal unreachable(String schema, String found) {
        return new StartupRefusal("idemkit's tables belong in schema " + schema + " but the data"
                + " source's search path " + (found == null ? "does not reach them"
                : "finds processed_messages in schema " + found) + ": put " + schema + " first on it (e.g."
                + " currentSchema=" + schema + " in the JDBC URL) or set idemkit.postgres.schema to the"
                + " schema the service uses");
    }

    private static String current(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            String schema = c.getSchema();
            return schema == null || schema.isBlank() ? "public" : schema;
        } catch (SQLException e) {
            throw new IllegalStateException("idemkit could not read the data source's current schema; set"
                    + " idemkit.postgres.schema", e);
        }
    }
}
