package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedIdempotencyClaims;
import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.service.IdempotentRequestService;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.util.HashSet;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * idemkit in a Spring Boot service, from {@code idemkit.*} properties; every bean backs off when the service defines
 * its own. With a {@link DataSource} and idemkit-adapters-postgres: idemkit's tables (unless
 * {@code idemkit.postgres.migrations=none}) and an {@link IdempotentInbox} that joins the service's transactions.
 * With spring-rabbit and {@code idemkit.rabbit.idempotent-listeners=true}: every {@code @RabbitListener} of Boot's
 * container factory through the inbox, retry and dead-letter queue. With a Micrometer registry: meters.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    InboxMeters idemkitInboxMeters(ObjectProvider<MeterRegistryHolder> registry) {
        return registry.getIfAvailable(() -> () -> InboxMeters.NONE).meters();
    }

    /** The Micrometer bridge, only when Micrometer is on the class path (it is optional). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnBean(MeterRegistry.class)
        MeterRegistryHolder idemkitMeterRegistryHolder(MeterRegistry registry) {
            MicrometerInboxMeters meters = new MicrometerInboxMeters(registry);
            return () -> meters;
        }
    }

    /** Lets the meters bean depend on Micrometer without naming it where it may be absent. */
    @FunctionalInterface
    interface MeterRegistryHolder {
        InboxMeters meters();
    }

    /** The PostgreSQL inbox in the service's transactions. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(JoinedInboxStore.class)
    @ConditionalOnBean(DataSource.class)
    static class Postgres {
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
         * idemkit's statements name its tables unqualified: the data source's search path must find them in the
         * schema they are in, or every key would fail (or land in another schema's table of the same name).
         */
        private static void requireVisible(DataSource dataSource, String schema) {
            try (Connection c = dataSource.getConnection();
                    java.sql.PreparedStatement ps = c.prepareStatement("SELECT n.nspname FROM pg_class t JOIN"
                            + " pg_namespace n ON n.oid = t.relnamespace WHERE t.oid = to_regclass('processed_messages')");
                    java.sql.ResultSet rs = ps.executeQuery()) {
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

    /** Idempotent {@code @RabbitListener}s. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({AbstractRabbitListenerContainerFactory.class, JoinedInboxStore.class})
    @ConditionalOnProperty(prefix = "idemkit.rabbit", name = "idempotent-listeners", havingValue = "true")
    static class Rabbit {
        @Bean
        @ConditionalOnMissingBean
        RabbitDeadLetters idemkitRabbitDeadLetters(ConnectionFactory connectionFactory, InboxMeters meters) {
            return new RabbitDeadLetters(connectionFactory, meters, Clock.systemUTC());
        }

        @Bean
        RabbitDeadLettersHolder idemkitRabbitDeadLettersHolder(RabbitDeadLetters deadLetters) {
            return deadLetters::depths;
        }

        @Bean
        @ConditionalOnMissingBean
        IdempotentListenerAdvice idempotentListenerAdvice(IdempotentInbox inbox,
                PlatformTransactionManager transactionManager, RabbitDeadLetters deadLetters,
                IdemkitProperties properties) {
            IdemkitProperties.Retry r = properties.getRetry();
            RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(r.getMaxAttempts())
                    .withBackoff(Backoff.exponential(r.getBaseDelay(), r.getMaxDelay(), Jitter.FULL));
            return new IdempotentListenerAdvice(inbox, new TransactionTemplate(transactionManager), deadLetters, policy,
                    new HashSet<>(properties.getRabbit().getQueues()), Clock.systemUTC());
        }

        @Bean
        IdempotentListenersCheck idemkitIdempotentListenersCheck(
                org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry registry,
                IdemkitProperties properties) {
            return new IdempotentListenersCheck(registry, new HashSet<>(properties.getRabbit().getQueues()));
        }

        /** Appends the advice to Boot's listener container factory (keeping any advice the service set). */
        @Bean
        static BeanPostProcessor idemkitListenerFactoryAdvice(ObjectProvider<IdempotentListenerAdvice> advice) {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (bean instanceof AbstractRabbitListenerContainerFactory<?> factory
                            && "rabbitListenerContainerFactory".equals(beanName)) {
                        org.aopalliance.aop.Advice[] existing = factory.getAdviceChain();
                        if (existing != null && java.util.Arrays.stream(existing)
                                .anyMatch(a -> a.getClass().getName().contains("Retry"))) {
                            throw new IllegalStateException("idemkit.rabbit.idempotent-listeners=true retries and"
                                    + " dead-letters itself: turn Spring's listener retry off"
                                    + " (spring.rabbitmq.listener.simple.retry.enabled=false); its recoverer would reject"
                                    + " messages that idemkit sends back to the broker while the database is down");
                        }
                        org.aopalliance.aop.Advice[] chain = existing == null ? new org.aopalliance.aop.Advice[1]
                                : java.util.Arrays.copyOf(existing, existing.length + 1);
                        chain[chain.length - 1] = advice.getObject();
                        factory.setAdviceChain(chain);
                    }
                    return bean;
                }
            };
        }
    }

    /** idemkit's health: the store, and the dead-letter queues of the idempotent listeners. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(value = JoinedInboxStore.class,
            name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnBean(DataSource.class)
    static class HealthConfig {
        @Bean
        @ConditionalOnMissingBean(name = "idemkitHealthIndicator")
        IdemkitHealthIndicator idemkitHealthIndicator(DataSource dataSource, IdemkitSchema schema,
                ObjectProvider<RabbitDeadLettersHolder> deadLetters, IdemkitProperties properties) {
            RabbitDeadLettersHolder holder = deadLetters.getIfAvailable(() -> java.util.Map::of);
            return new IdemkitHealthIndicator(dataSource, holder::depths, properties.getRabbit().getAlertThreshold());
        }
    }

    /** The dead-letter depths without naming spring-rabbit where it may be absent. */
    @FunctionalInterface
    interface RabbitDeadLettersHolder {
        java.util.Map<String, Long> depths();
    }

    /** The Idempotency-Key protocol for Spring MVC endpoints ({@code idemkit.http.paths}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(value = JoinedInboxStore.class,
            name = {"org.springframework.web.filter.OncePerRequestFilter", "jakarta.servlet.Filter"})
    @ConditionalOnBean(DataSource.class)
    @Conditional(OnHttpPathsCondition.class)
    static class Http {
        @Bean
        @ConditionalOnMissingBean(name = "idemkitIdempotencyKeyFilter")
        jakarta.servlet.Filter idemkitIdempotencyKeyFilter(DataSource dataSource, IdemkitSchema schema,
                PlatformTransactionManager transactionManager, IdemkitProperties properties) {
            IdemkitProperties.Http http = properties.getHttp();
            KeyPolicy policy = new KeyPolicy(http.getTtl(), http.getWaitBound(),
                    http.isKeyRequired() ? KeyPolicy.Requirement.REQUIRED : KeyPolicy.Requirement.OPTIONAL);
            SpringCallerTransaction caller = new SpringCallerTransaction(dataSource);
            var claims = new SpringIdempotencyClaims(new JoinedIdempotencyClaims(caller),
                    new TransactionTemplate(transactionManager));
            LOG.info("idemkit Idempotency-Key protocol on {} {} (schema {}, client from the principal{})",
                    http.getMethods(), http.getPaths(), schema.name(),
                    http.getClientHeader() == null ? "" : " or " + http.getClientHeader());
            return new IdempotencyKeyFilter(new IdempotentRequestService<>(claims, policy), http.getPaths(),
                    http.getMethods().stream().map(m -> m.toUpperCase(java.util.Locale.ROOT))
                            .collect(java.util.stream.Collectors.toSet()), http.getClientHeader(), caller::doomed);
        }
    }

    /** The schema idemkit's tables are in (after its migrations ran, when idemkit applies them). */
    public record IdemkitSchema(String name) {}
}
