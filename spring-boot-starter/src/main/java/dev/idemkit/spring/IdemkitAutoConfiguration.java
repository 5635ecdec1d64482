package dev.idemkit.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * idemkit in a Spring Boot service, from {@code idemkit.*} properties: the properties and the meters every other part
 * reports to (Micrometer when a registry is there). Each concern has an auto-configuration of its own, all backing off
 * when the service defines the bean itself: {@link IdemkitPostgresAutoConfiguration} (tables, the inbox joining the
 * service's transactions), {@link IdemkitRabbitAutoConfiguration} (idempotent {@code @RabbitListener}s),
 * {@link IdemkitWebAutoConfiguration} (the Idempotency-Key protocol for Spring MVC) and
 * {@link IdemkitHealthAutoConfiguration} (health). {@code idemkit.enabled=false} turns them all off.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    InboxMeters idemkitInboxMeters(ObjectProvider<MeterRegistryHolder> registry) {
        return registry.getIfAvailable(() -> MeterRegistryHolder.NONE).meters();
    }

    @Bean
    @ConditionalOnMissingBean
    RetentionMeters idemkitRetentionMeters(ObjectProvider<MeterRegistryHolder> registry) {
        return registry.getIfAvailable(() -> MeterRegistryHolder.NONE).retention();
    }

    /** The Micrometer bridge, only when Micrometer is on the class path (it is optional). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnBean(MeterRegistry.class)
        MeterRegistryHolder idemkitMeterRegistryHolder(MeterRegistry registry) {
            MicrometerInboxMeters meters = new MicrometerInboxMeters(registry);
            MicrometerRetentionMeters retention = new MicrometerRetentionMeters(registry);
            return new MeterRegistryHolder() {
                @Override
                public InboxMeters meters() {
                    return meters;
                }

                @Override
                public RetentionMeters retention() {
                    return retention;
                }

                @Override
                public OutboxMeters outbox() {
                    // made by the outbox's configuration only, once: a service without the outbox has none of them
                    return new MicrometerOutboxMeters(registry);
                }
            };
        }
    }

    /** Lets the meters beans depend on Micrometer without naming it where it may be absent. */
    interface MeterRegistryHolder {
        MeterRegistryHolder NONE = new MeterRegistryHolder() {
            @Override
            public InboxMeters meters() {
                return InboxMeters.NONE;
            }

            @Override
            public RetentionMeters retention() {
                return RetentionMeters.NONE;
            }

            @Override
            public OutboxMeters outbox() {
                return OutboxMeters.NONE;
            }
        };

        InboxMeters meters();

        RetentionMeters retention();

        OutboxMeters outbox();
    }

    /** The schema idemkit's tables are in (after its migrations ran, when idemkit applies them). */
    public record IdemkitSchema(String name) {}
}
