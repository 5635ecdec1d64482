package dev.idemkit.spring;

import dev.idemkit.adapters.kafka.KafkaAdoptedDeliveries;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.aopalliance.aop.Advice;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * With spring-kafka, idemkit-adapters-kafka and {@code idemkit.kafka.idempotent-listeners=true}: every
 * {@code @KafkaListener} of Boot's {@code kafkaListenerContainerFactory} naming its topics (or those of
 * {@code idemkit.kafka.topics}) through idemkit's delivery flow ({@link IdempotentKafkaListenerAdvice}), its retries
 * and dead letters on the Kafka adapter's settle paths ({@link KafkaAdoptedDeliveries}) through a producer of its own
 * to the brokers Spring connects to, its retry topics consumed by the starter ({@link KafkaListenerRetries}).
 */
@AutoConfiguration(after = {IdemkitAutoConfiguration.class, IdemkitPostgresAutoConfiguration.class},
        afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnClass(name = {"org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory",
        "dev.idemkit.adapters.postgres.JoinedInboxStore"})
@ConditionalOnProperty(prefix = "idemkit.kafka", name = "idempotent-listeners", havingValue = "true")
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitKafkaAutoConfiguration {

    /** The listeners on the Kafka adapter's settle paths. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"dev.idemkit.adapters.kafka.KafkaAdoptedDeliveries",
            "org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails"})
    @ConditionalOnBean(DataSource.class)
    static class Listeners {
        /** idemkit's producer and admin client for the listeners' copies, to the brokers Spring connects to. */
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        KafkaMessageTransport idemkitKafkaTransport(
                org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails connection,
                org.springframework.boot.kafka.autoconfigure.KafkaProperties kafka, IdemkitProperties properties) {
            KafkaSettings settings = KafkaSettings.defaults(String.join(",", connection.getBootstrapServers()))
                    .withClientProperties(kafka.getProperties()); // spring.kafka.properties.* (security, ...)
            List<java.time.Duration> buckets = properties.getKafka().getRetryBuckets();
            if (buckets != null && !buckets.isEmpty()) {
                settings = settings.withRetryBuckets(buckets);
            }
            return new KafkaMessageTransport(settings);
        }

        @Bean
        @ConditionalOnMissingBean
        KafkaAdoptedDeliveries idemkitKafkaDeliveries(KafkaMessageTransport transport) {
            return new KafkaAdoptedDeliveries(transport);
        }

        @Bean
        @ConditionalOnMissingBean
        IdempotentKafkaListenerAdvice idempotentKafkaListenerAdvice(DataSource dataSource,
                PlatformTransactionManager transactionManager, KafkaAdoptedDeliveries deliveries, InboxMeters meters,
                IdemkitProperties properties, ObjectProvider<ConsumerEvents> events) {
            IdemkitProperties.Retry r = properties.getRetry();
            RetryPolicy policy = r.toPolicy();
            ListenerInbox inbox = new ListenerInbox(dataSource, transactionManager);
            List<ConsumerEvents> hooks = new java.util.ArrayList<>();
            hooks.add(new ListenerMeters(meters));
            events.orderedStream().forEach(hooks::add);
            return new IdempotentKafkaListenerAdvice(inbox, deliveries, policy,
                    new HashSet<>(properties.getKafka().getTopics()),
                    () -> ThreadLocalRandom.current().nextDouble(), Clock.system(), ConsumerEvents.all(hooks),
                    IdemkitProperties.bytes("idemkit.kafka.max-body-size", properties.getKafka().getMaxBodySize()));
        }

        @Bean
        KafkaListenerRetries idemkitKafkaListenerRetries(KafkaListenerEndpointRegistry registry,
                IdempotentKafkaListenerAdvice advice, KafkaAdoptedDeliveries deliveries,
                ConsumerFactory<?, ?> consumerFactory) {
            return new KafkaListenerRetries(registry, advice, deliveries, recordTypes(consumerFactory),
                    consumerFactory.getConfigurationProperties());
        }

        /**
         * Appends the advice to Boot's listener container factory (keeping any advice the service set); the served
         * containers get the error handler that never skips a record when they start ({@link KafkaListenerRetries}).
         */
        @Bean
        static BeanPostProcessor idemkitKafkaListenerFactoryAdvice(
                ObjectProvider<IdempotentKafkaListenerAdvice> advice) {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (bean instanceof ConcurrentKafkaListenerContainerFactory<?, ?> factory
                            && "kafkaListenerContainerFactory".equals(beanName)) {
                        if (Boolean.TRUE.equals(factory.isBatchListener())) {
                            throw new StartupRefusal("idemkit.kafka.idempotent-listeners=true takes one record per"
                                    + " call: spring.kafka.listener.type must be single, not batch");
                        }
                        recordTypes(factory.getConsumerFactory()); // refuses other deserializers now
                        Advice[] existing = factory.getContainerProperties().getAdviceChain();
                        Advice[] chain = existing == null ? new Advice[1]
                                : Arrays.copyOf(existing, existing.length + 1);
                        chain[chain.length - 1] = advice.getObject();
                        factory.getContainerProperties().setAdviceChain(chain);
                    }
                    return bean;
                }
            };
        }
    }

    /**
     * Whether the consumer factory's records have String or byte[] keys and values; refuses any other deserializer
     * (idemkit keys, fingerprints and copies a record by its bytes).
     */
    static IdempotentKafkaListenerAdvice.RecordTypes recordTypes(ConsumerFactory<?, ?> factory) {
        Map<String, Object> config = factory.getConfigurationProperties();
        return new IdempotentKafkaListenerAdvice.RecordTypes(
                strings("key", factory.getKeyDeserializer(), config.get(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG)),
                strings("value", factory.getValueDeserializer(),
                        config.get(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG)));
    }

    /** {@code base} with a listener's own deserializer properties ({@code @KafkaListener(properties = ...)}) applied. */
    static IdempotentKafkaListenerAdvice.RecordTypes recordTypes(IdempotentKafkaListenerAdvice.RecordTypes base,
            java.util.Properties listener, String listenerId) {
        if (listener == null) {
            return base;
        }
        Object key = listener.get(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        Object value = listener.get(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        try {
            return new IdempotentKafkaListenerAdvice.RecordTypes(
                    key == null ? base.stringKeys() : strings("key", null, String.valueOf(key).trim()),
                    value == null ? base.stringValues() : strings("value", null, String.valueOf(value).trim()));
        } catch (StartupRefusal e) {
            throw new StartupRefusal("@KafkaListener " + listenerId + ": " + e.getMessage());
        }
    }

    private static boolean strings(String what, Object instance, Object configured) {
        Object d = instance != null ? instance.getClass() : configured;
        String name = d instanceof Class<?> c ? c.getName() : String.valueOf(d);
        if (name.equals(StringDeserializer.class.getName())) {
            return true;
        }
        if (name.equals(ByteArrayDeserializer.class.getName())) {
            return false;
        }
        throw new StartupRefusal("idemkit.kafka.idempotent-listeners=true needs a StringDeserializer or a"
                + " ByteArrayDeserializer for record " + what + "s (idemkit keys, fingerprints and copies a record by"
                + " its bytes), got " + name + ": set spring.kafka.consumer." + what + "-deserializer, and convert in"
                + " the listener");
    }

    /**
     * The idempotent listeners' error handler: a record the advice could not settle (its copy not acked) is sought
     * back to and comes again after a pause, growing to 30 s; it is never skipped, whatever the exception.
     */
    static final class NeverSkip extends DefaultErrorHandler {
        NeverSkip() {
            super((record, e) -> {
                throw new IllegalStateException("idempotent @KafkaListener: record " + record.topic() + "-"
                        + record.partition() + "@" + record.offset() + " is never skipped", e);
            }, backOff());
            setClassifications(Map.of(), true); // every exception is tried again, none goes to the recoverer first
        }

        private static ExponentialBackOff backOff() {
            ExponentialBackOff b = new ExponentialBackOff(500, 2.0);
            b.setMaxInterval(30_000);
            b.setMaxElapsedTime(Long.MAX_VALUE);
            return b;
        }
    }

    /** Idempotent listeners asked for without the Kafka adapter: refuse to start, saying what to add. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("dev.idemkit.adapters.kafka.KafkaAdoptedDeliveries")
    static class AdapterMissing {
        @Bean
        Object idemkitKafkaAdapterMissing() {
            throw new StartupRefusal("idemkit.kafka.idempotent-listeners=true needs dev.idemkit:"
                    + "idemkit-adapters-kafka on the class path (its retry and dead-letter topics are the listeners'"
                    + " settle paths): add it beside the starter");
        }
    }
}
