package dev.idemkit.benchmarks.spring.outbox;

import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.spring.IdemkitOutbox;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.annotation.Transactional;

/**
 * The two services of {@link OutboxPeersBenchmark}: a credit and the event that says so, committed together and then
 * published to Kafka, with idemkit's outbox and with Spring Modulith's event publication registry and its Kafka
 * externalization (the peer of issue 33 item 3), on Kafka; and on RabbitMQ, idemkit's relay beside Modulith's registry
 * with an {@code @ApplicationModuleListener} that sends through {@link RabbitTemplate}. The same transaction in all:
 * {@code UPDATE accounts}, then the event.
 */
public final class OutboxServices {
    private OutboxServices() {}

    /** What the benchmark calls: one credit and its event in one transaction. */
    public interface Credits {
        void credit(String id, String account);
    }

    /** The event Modulith externalizes; its id is the message the consumer sees. */
    public record CreditApplied(String id, String account) {}

    /**
     * idemkit: {@code IdemkitOutbox.append} in the credit's transaction ({@code idemkit.outbox.enabled=true}, the event
     * type's destination the benchmark's topic); the starter's relay publishes through the service's own
     * {@link MessageTransport} bean, adapters-kafka's transport (its idempotent producer, {@code acks=all}), and marks
     * the row sent once the broker acknowledged it.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
    @Import(IdemkitService.OutboxCredits.class)
    public static class IdemkitService {
        @Bean(destroyMethod = "close")
        MessageTransport kafkaTransport(@Value("${spring.kafka.bootstrap-servers}") String bootstrap) {
            return new KafkaMessageTransport(KafkaSettings.defaults(bootstrap));
        }

        public static class OutboxCredits implements Credits {
            private final JdbcTemplate jdbc;
            private final IdemkitOutbox outbox;

            public OutboxCredits(JdbcTemplate jdbc, IdemkitOutbox outbox) {
                this.jdbc = jdbc;
                this.outbox = outbox;
            }

            @Override
            @Transactional
            public void credit(String id, String account) {
                jdbc.update("UPDATE accounts SET balance = balance + 1 WHERE id = ?", account);
                outbox.append("credit-applied", account, id);
            }
        }
    }

    /**
     * Spring Modulith 2.0.3, as its reference documentation sets up event externalization: the JDBC event publication
     * registry (its table created by {@code spring.modulith.events.jdbc.schema-initialization.enabled=true}), the
     * event published with Spring's {@link ApplicationEventPublisher} in the credit's transaction, externalized to Kafka
     * by {@code spring-modulith-events-kafka} after the commit (the route and key from an
     * {@link EventExternalizationConfiguration} bean, the payload the event's id; Boot's {@code KafkaTemplate} with the
     * byte-array value serializer the module's JSON converter needs), the publication marked completed when the send
     * completes.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
    @Import(ModulithService.EventCredits.class)
    public static class ModulithService {
        @Bean
        EventExternalizationConfiguration externalization(@Value("${bench.topic}") String topic) {
            return EventExternalizationConfiguration.externalizing()
                    .select(e -> e instanceof CreditApplied)
                    .mapping(CreditApplied.class, CreditApplied::id)
                    .route(CreditApplied.class, e -> RoutingTarget.forTarget(topic).andKey(e.account()))
                    .build();
        }

        public static class EventCredits implements Credits {
            private final JdbcTemplate jdbc;
            private final ApplicationEventPublisher events;

            public EventCredits(JdbcTemplate jdbc, ApplicationEventPublisher events) {
                this.jdbc = jdbc;
                this.events = events;
            }

            @Override
            @Transactional
            public void credit(String id, String account) {
                jdbc.update("UPDATE accounts SET balance = balance + 1 WHERE id = ?", account);
                events.publishEvent(new CreditApplied(id, account));
            }
        }
    }

    /**
     * idemkit on RabbitMQ: the same credits as {@link IdemkitService}; the starter's relay publishes through the
     * transport it makes from {@code spring.rabbitmq.*} (adapters-rabbit's producer: persistent messages, publisher
     * confirms) to the benchmark's queue, and marks the row sent once the broker confirmed it.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(IdemkitService.OutboxCredits.class)
    public static class IdemkitRabbitService {}

    /**
     * Spring Modulith 2.0.3 on RabbitMQ, as its reference documentation has a module react to another's event (its AMQP
     * externalization module does not resolve here): the JDBC event publication registry records the event in the
     * credit's transaction; after the commit an {@link ApplicationModuleListener} (asynchronous with
     * {@link EnableAsync}, Boot's task executor) sends it through Boot's {@link RabbitTemplate} and waits for the
     * broker's confirm ({@code spring.rabbitmq.publisher-confirm-type=simple}), so that the publication is marked
     * completed only for a message the broker took; a send that fails leaves it incomplete, for a resubmission.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableAsync
    @Import({ModulithService.EventCredits.class, ModulithRabbitService.Forwarder.class})
    public static class ModulithRabbitService {
        public static class Forwarder {
            private final RabbitTemplate rabbit;
            private final String queue;

            public Forwarder(RabbitTemplate rabbit, @Value("${bench.queue}") String queue) {
                this.rabbit = rabbit;
                this.queue = queue;
            }

            @ApplicationModuleListener
            public void on(CreditApplied event) {
                rabbit.invoke(ops -> {
                    ops.convertAndSend("", queue, event.id());
                    ops.waitForConfirmsOrDie(10_000);
                    return null;
                });
            }
        }
    }
}
