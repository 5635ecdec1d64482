package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import java.util.Arrays;
import java.util.HashSet;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.aopalliance.aop.Advice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.StatefulRetryOperationsInterceptor;
import org.springframework.amqp.rabbit.config.StatelessRetryOperationsInterceptor;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
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
import org.springframework.transaction.PlatformTransactionManager;

/**
 * With spring-rabbit, idemkit-adapters-rabbit and {@code idemkit.rabbit.idempotent-listeners=true}: every
 * {@code @RabbitListener} of Boot's listener container factory (or those of {@code idemkit.rabbit.queues}) through
 * idemkit's delivery flow ({@link IdempotentListenerAdvice}), its retries and dead letters on the RabbitMQ adapter's
 * settle paths, over a publishing connection of its own to the broker Spring connects to.
 */
@AutoConfiguration(after = {IdemkitAutoConfiguration.class, IdemkitPostgresAutoConfiguration.class},
        afterName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnClass({AbstractRabbitListenerContainerFactory.class, JoinedInboxStore.class})
@ConditionalOnProperty(prefix = "idemkit.rabbit", name = "idempotent-listeners", havingValue = "true")
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitRabbitAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitRabbitAutoConfiguration.class);

    /** The listeners on the RabbitMQ adapter's settle paths. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(value = RabbitAdoptedDeliveries.class,
            name = "org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails")
    @ConditionalOnBean(DataSource.class)
    static class Listeners {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        RabbitAdoptedDeliveries idemkitRabbitDeliveries(ConnectionFactory connectionFactory,
                ObjectProvider<org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails> details,
                IdemkitProperties properties) {
            RabbitSettings base = RabbitSettings.defaults();
            var connection = details.getIfAvailable();
            RabbitSettings settings = (connection != null ? SpringRabbitUri.of(base, connection)
                    : SpringRabbitUri.of(base, connectionFactory))
                    .withQueueType(properties.getRabbit().getQueueType() == IdemkitProperties.QueueType.CLASSIC
                            ? RabbitSettings.QueueType.CLASSIC : RabbitSettings.QueueType.QUORUM)
                    .withMaxAttemptsHint(properties.getRetry().getMaxAttempts());
            return new RabbitAdoptedDeliveries(settings, Clock.system(), "idemkit-spring");
        }

        @Bean
        IdemkitHealthAutoConfiguration.DeadLetterDepths idemkitRabbitDeadLetterDepths(
                RabbitAdoptedDeliveries deliveries, IdempotentListenersCheck check) {
            return () -> check.deadLetterDepths(deliveries.deadLetterQueue());
        }

        @Bean
        IdemkitHealthAutoConfiguration.TransportHealth idemkitRabbitSettleHealth(RabbitAdoptedDeliveries deliveries) {
            return deliveries::health;
        }

        @Bean
        @ConditionalOnMissingBean
        IdempotentListenerAdvice idempotentListenerAdvice(DataSource dataSource,
                PlatformTransactionManager transactionManager, RabbitAdoptedDeliveries deliveries, InboxMeters meters,
                IdemkitProperties properties, ObjectProvider<ConsumerEvents> events) {
            IdemkitProperties.Retry r = properties.getRetry();
            RetryPolicy policy = r.toPolicy();
            // a transaction of its own per delivery: its key and effect commit before the container acks, whatever
            // surrounds the listener (an outer transaction is refused at start-up, see below)
            ListenerInbox inbox = new ListenerInbox(dataSource, transactionManager);
            java.util.List<ConsumerEvents> hooks = new java.util.ArrayList<>();
            hooks.add(new ListenerMeters(meters));
            events.orderedStream().forEach(hooks::add); // the service's own hooks (tracing, metrics) see every decision
            LOG.info("idemkit idempotent @RabbitListeners on {}: inbox in the listener's transaction, {} attempts,"
                    + " retries in <queue>.retry.<n>s, dead letters in <queue>.dlq ({} queues)",
                    properties.getRabbit().getQueues().isEmpty() ? "every queue" : properties.getRabbit().getQueues(),
                    r.getMaxAttempts(), properties.getRabbit().getQueueType().name().toLowerCase(java.util.Locale.ROOT));
            return new IdempotentListenerAdvice(inbox, deliveries, policy,
                    new HashSet<>(properties.getRabbit().getQueues()),
                    () -> ThreadLocalRandom.current().nextDouble(), Clock.system(), ConsumerEvents.all(hooks),
                    IdemkitProperties.bytes("idemkit.rabbit.max-body-size", properties.getRabbit().getMaxBodySize()));
        }


        @Bean
        IdempotentListenersCheck idemkitIdempotentListenersCheck(RabbitListenerEndpointRegistry registry,
                IdempotentListenerAdvice advice, RabbitAdoptedDeliveries deliveries,
                ObjectProvider<org.springframework.amqp.core.Queue> declared) {
            java.util.Map<String, org.springframework.amqp.core.Queue> byName = new java.util.HashMap<>();
            declared.orderedStream().forEach(q -> byName.putIfAbsent(q.getActualName(), q));
            return new IdempotentListenersCheck(registry, advice::serves, deliveries::declare, byName::get);
        }

        /** Appends the advice to Boot's listener container factory (keeping any advice the service set). */
        @Bean
        static BeanPostProcessor idemkitListenerFactoryAdvice(ObjectProvider<IdempotentListenerAdvice> advice,
                ObjectProvider<IdemkitProperties> properties) {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (bean instanceof AbstractRabbitListenerContainerFactory<?> factory
                            && "rabbitListenerContainerFactory".equals(beanName)) {
                        Advice[] existing = factory.getAdviceChain();
                        if (existing != null && Arrays.stream(existing).anyMatch(a -> a instanceof
                                StatelessRetryOperationsInterceptor || a instanceof StatefulRetryOperationsInterceptor)) {
                            throw new StartupRefusal("idemkit.rabbit.idempotent-listeners=true retries and"
                                    + " dead-letters itself: turn Spring's listener retry off"
                                    + " (spring.rabbitmq.listener.simple.retry.enabled=false); its recoverer would"
                                    + " reject or republish messages that idemkit settles");
                        }
                        if (existing != null && Arrays.stream(existing).anyMatch(a -> a instanceof
                                org.springframework.transaction.interceptor.TransactionInterceptor)) {
                            throw new StartupRefusal("idemkit.rabbit.idempotent-listeners=true runs each"
                                    + " delivery in a transaction of its own, committed before the ack: remove the"
                                    + " transaction advice from the listener container factory's advice chain (a"
                                    + " failed attempt would roll back the outer transaction after idemkit scheduled"
                                    + " its retry, and the container would requeue the original too)");
                        }
                        java.time.Duration batchWait = properties.getObject().getRabbit().getBatchReceiveTimeout();
                        if (factory instanceof SimpleRabbitListenerContainerFactory simple && !batchWait.isZero()) {
                            // a batch is acknowledged after its commit: bound how long its first message waits
                            simple.setBatchReceiveTimeout(batchWait.toMillis());
                        }
                        Advice[] chain = existing == null ? new Advice[1] : Arrays.copyOf(existing, existing.length + 1);
                        chain[chain.length - 1] = advice.getObject();
                        factory.setAdviceChain(chain);
                    }
                    return bean;
                }
            };
        }
    }

    /** Idempotent listeners asked for without the RabbitMQ adapter: refuse to start, saying what to add. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries")
    static class AdapterMissing {
        @Bean
        Object idemkitRabbitAdapterMissing() {
            throw new StartupRefusal("idemkit.rabbit.idempotent-listeners=true needs dev.idemkit:"
                    + "idemkit-adapters-rabbit on the class path (its retry buckets and dead-letter queues are the"
                    + " listeners' settle paths): add it beside the starter");
        }
    }
}
