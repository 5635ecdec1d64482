package dev.idemkit.spring.outboxsample;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A small order service using idemkit's outbox: {@link Orders} writes an order and appends its event in one
 * {@code @Transactional} method, the starter's relay publishes the event after the commit, and {@link Shipping}, an
 * idempotent {@code @RabbitListener}, records each event on its order once. Its tests start it against the local
 * PostgreSQL and RabbitMQ ({@code OutboxSampleServiceIT}, and killed mid-relay, {@code OutboxCrashIT}).
 */
@SpringBootApplication
public class OrderService {
    /** The queue the events go to, the consumer's: durable, dead-lettering into idemkit's dead-letter queue. */
    @Bean
    Queue orderEventsQueue(@Value("${orders.queue}") String name) {
        return new Queue(name, true, false, false,
                dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries.workQueueArguments(name));
    }

    /** Boot's metrics auto-configuration is not on this test's class path: a registry of the service's own. */
    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }
}
