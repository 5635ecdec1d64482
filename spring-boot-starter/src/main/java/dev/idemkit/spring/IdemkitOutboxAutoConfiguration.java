package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.service.OutboxRelay;
import dev.idemkit.spring.IdemkitAutoConfiguration.IdemkitSchema;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * With {@code idemkit.outbox.enabled=true}, a {@link DataSource} and idemkit-adapters-postgres: {@link IdemkitOutbox},
 * whose append joins the service's transaction, and {@link IdemkitOutboxRelay}, which publishes what committed through
 * a {@link MessageTransport}: the service's own bean of that type, else RabbitMQ through adapters-rabbit's
 * {@code RabbitProducer} on the broker Spring connects to ({@link IdemkitOutboxRabbitAutoConfiguration}). Refused at
 * start-up: no destinations, an invalid destination, and no transport.
 */
@AutoConfiguration(after = {IdemkitAutoConfiguration.class, IdemkitPostgresAutoConfiguration.class,
        IdemkitOutboxRabbitAutoConfiguration.class})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnProperty(prefix = "idemkit.outbox", name = "enabled", havingValue = "true")
@ConditionalOnClass(PostgresOutbox.class)
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitOutboxAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitOutboxAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    IdemkitOutbox idemkitOutbox(DataSource dataSource, IdemkitSchema schema, IdemkitProperties properties) {
        Map<String, String> destinations = properties.getOutbox().getDestinations();
        if (destinations.isEmpty()) {
            throw new StartupRefusal("idemkit.outbox.enabled=true needs at least one destination: set"
                    + " idemkit.outbox.destinations.<event type>=<queue> for each event type the service appends");
        }
        destinations.forEach((type, queue) -> {
            try {
                OutboxMessage.of(queue, type, new byte[0]); // the rules a row's destination is held to
            } catch (IllegalArgumentException e) {
                throw new StartupRefusal("idemkit.outbox.destinations." + type + ": " + e.getMessage(), e);
            }
        });
        return new IdemkitOutbox(new SpringCallerTransaction(dataSource), new PostgresOutbox(schema.name()),
                destinations);
    }

    @Bean
    @ConditionalOnMissingBean
    OutboxMeters idemkitOutboxMeters(
            ObjectProvider<IdemkitAutoConfiguration.MeterRegistryHolder> registry) {
        return registry.getIfAvailable(() -> IdemkitAutoConfiguration.MeterRegistryHolder.NONE).outbox();
    }

    /** The relay's side of the outbox table; its LISTEN connection is opened outside the pool where it can be. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    PostgresOutboxStore idemkitOutboxStore(DataSource dataSource, IdemkitSchema schema) {
        return new PostgresOutboxStore(dataSource, schema.name(), () -> listenConnection(dataSource));
    }

    @Bean
    @ConditionalOnMissingBean
    IdemkitOutboxRelay idemkitOutboxRelay(PostgresOutboxStore store, ObjectProvider<MessageTransport> transports,
            OutboxMeters meters, IdemkitProperties properties, IdemkitSchema schema, IdemkitOutbox outbox) {
        // the outbox is a parameter so that its refusals (no or invalid destinations) come before this bean's
        MessageTransport transport = transports.getIfUnique(() -> {
            throw new StartupRefusal("idemkit.outbox.enabled=true needs exactly one transport to publish with (found "
                    + transports.stream().count() + "): add dev.idemkit:idemkit-adapters-rabbit and"
                    + " spring-boot-starter-amqp (the relay then publishes to the broker Spring connects to), or define"
                    + " one bean of type " + MessageTransport.class.getName() + " (or mark one @Primary)");
        });
        IdemkitProperties.Outbox o = properties.getOutbox();
        OutboxRelay.Settings settings;
        try {
            settings = OutboxRelay.Settings.defaults().withPollInterval(o.getPollInterval())
                    .withRetryPolicy(o.getRetry().toPolicy());
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new StartupRefusal("idemkit.outbox.*: " + e.getMessage() + " (retry.max-attempts at least 1,"
                    + " retry.base-delay, retry.max-delay and poll-interval positive durations)", e);
        }
        LOG.info("idemkit outbox joins the service's transactions on schema {}; its relay publishes {} after each"
                + " commit, in commit order per ordering key, and parks a row after {} failed publishes",
                schema.name(), new java.util.TreeMap<>(o.getDestinations()), o.getRetry().getMaxAttempts());
        return new IdemkitOutboxRelay(() -> new OutboxRelay(store, transport, UnaryOperator.identity(), settings,
                () -> ThreadLocalRandom.current().nextDouble(), Clock.system(), meters), store, meters, transport::health);
    }

    /**
     * The connection the relay waits for commit notifications on. It stays open for good, so it is not taken from the
     * pool when the pool is HikariCP with a JDBC URL (Boot's default): a connection of its own with the pool's URL and
     * credentials, and timeouts so that a connection that died silently is noticed. Any other pool lends one
     * connection to it while the relay runs, and so does HikariCP configured with a data source class instead of a
     * URL.
     */
    static Connection listenConnection(DataSource dataSource) throws java.sql.SQLException {
        if (dataSource.isWrapperFor(com.zaxxer.hikari.HikariDataSource.class)) {
            com.zaxxer.hikari.HikariDataSource hikari = dataSource.unwrap(com.zaxxer.hikari.HikariDataSource.class);
            if (hikari.getJdbcUrl() != null) {
                Properties p = new Properties();
                p.putAll(hikari.getDataSourceProperties()); // sslmode, certificates, ... as the pool connects
                if (hikari.getUsername() != null) {
                    p.setProperty("user", hikari.getUsername());
                }
                if (hikari.getPassword() != null) {
                    p.setProperty("password", hikari.getPassword());
                }
                p.setProperty("ApplicationName", "idemkit-outbox-listen");
                p.setProperty("connectTimeout", "10");
                p.setProperty("socketTimeout", "60");
                p.setProperty("tcpKeepAlive", "true");
                return DriverManager.getConnection(hikari.getJdbcUrl(), p);
            }
        }
        return dataSource.getConnection();
    }
}
