package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.spring.IdemkitAutoConfiguration.IdemkitSchema;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/** idemkit's health: the store, the listeners' settle paths (a broker that blocks publishing), their dead-letter queues. */
@AutoConfiguration(after = {IdemkitPostgresAutoConfiguration.class, IdemkitRabbitAutoConfiguration.class,
        IdemkitOutboxAutoConfiguration.class})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnClass({JoinedInboxStore.class, HealthIndicator.class})
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "idemkitHealthIndicator")
    IdemkitHealthIndicator idemkitHealthIndicator(DataSource dataSource, IdemkitSchema schema,
            ObjectProvider<DeadLetterDepths> deadLetters, ObjectProvider<TransportHealth> transport,
            IdemkitProperties properties) {
        DeadLetterDepths depths = deadLetters.getIfAvailable(() -> Map::of);
        TransportHealth settle = transport.getIfAvailable(() -> () -> "UP");
        return new IdemkitHealthIndicator(dataSource, depths::depths, settle::health,
                properties.getRabbit().getAlertThreshold());
    }

    /** The outbox's health, when the starter runs its relay ({@code idemkit.outbox.enabled=true}). */
    @Bean
    @ConditionalOnBean(IdemkitOutboxRelay.class)
    @ConditionalOnMissingBean(name = "idemkitOutboxHealthIndicator")
    IdemkitOutboxHealthIndicator idemkitOutboxHealthIndicator(IdemkitOutboxRelay relay,
            IdemkitProperties properties) {
        return new IdemkitOutboxHealthIndicator(relay::stats, relay::transportHealth,
                properties.getOutbox().getParkedAlertThreshold());
    }

    /** Whether the idempotent listeners' settle paths can publish: "UP" or "DOWN: " and why. */
    @FunctionalInterface
    interface TransportHealth {
        String health();
    }

    /** The depths of the idempotent listeners' dead-letter queues, without naming spring-rabbit where it may be absent. */
    @FunctionalInterface
    interface DeadLetterDepths {
        Map<String, Long> depths();
    }
}
