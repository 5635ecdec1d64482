package dev.idemkit.spring.sample;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A small Spring Boot service that uses idemkit the way a team would: the starter on the class path, properties, a
 * {@code @Transactional} service method and a {@code @RabbitListener}. Its tests start it against the local
 * PostgreSQL and RabbitMQ.
 */
@SpringBootApplication
public class SampleService {
    @Bean
    Queue creditsQueue(@Value("${sample.queue}") String name) {
        // durable, and dead-lettering into idemkit's dead-letter queue: what the broker itself dead-letters (a quorum
        // queue's delivery limit, a reject) lands there too, with its x-death, instead of being dropped
        return new Queue(name, true, false, false,
                dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries.workQueueArguments(name));
    }

    /** Boot's metrics auto-configuration is not on this test's class path: a registry of the service's own. */
    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }
}
