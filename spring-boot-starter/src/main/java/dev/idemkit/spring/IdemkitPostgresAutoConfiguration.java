package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.spring.IdemkitAutoConfiguration.IdemkitSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
            PostgresDatabase.applyMigrations(dataSource, schema);
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
     * idemkit's statements name its tables unqualified: the data source's search path must find them in the schema
     * they are in, or every key would fail (or land in another schema's table of the same name).
     */
    private static void requireVisible(DataSource dataSource, String schema) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT n.nspname FROM pg_class t JOIN pg_namespace n"
                        + " ON n.oid = t.relnamespace WHERE t.oid = to_regclass('processed_messages')");
                ResultSet rs = ps.executeQuery()) {
            String found = rs.next() ? rs.getString(1) : null;
            if (!schema.equals(found)) {
                throw new IllegalStateException("idemkit's tables are in schema " + schema + " but the data"
                        + " source's search path " + (found == null ? "does not reach them"
                        : "finds processed_messages in schema " + found) + ": put " + schema + " first on it (e.g."
                        + " currentSchema=" + schema + " in the JDBC URL) or set idemkit.postgres.schema to the"
                        + " schema the service uses");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("idemkit could not check where its tables are", e);
        }
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
