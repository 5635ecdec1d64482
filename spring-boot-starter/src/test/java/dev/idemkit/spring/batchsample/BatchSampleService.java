package dev.idemkit.spring.batchsample;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * A Spring Boot service with a batch listener: Spring AMQP's consumer batching
 * ({@code spring.rabbitmq.listener.simple.consumer-batch-enabled}) hands the listener a list of bodies. Body
 * "account:amount"; "poison" always throws.
 */
@SpringBootApplication
public class BatchSampleService {
    @Bean
    org.springframework.amqp.core.Queue creditsQueue(@Value("${sample.queue}") String name) {
        return new org.springframework.amqp.core.Queue(name, true, false, false,
                dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries.workQueueArguments(name));
    }

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    /** Credits every body of its batch; knows nothing of idemkit. */
    @Component
    public static class BatchCreditListener {
        /** The size of every list the listener was called with. */
        public static final Queue<Integer> SIZES = new ConcurrentLinkedQueue<>();
        /** Every body the listener was called with, in call order. */
        public static final Queue<String> BODIES = new ConcurrentLinkedQueue<>();
        private final JdbcTemplate jdbc;

        public BatchCreditListener(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @RabbitListener(id = "credit-batches", queues = "${sample.queue}", batch = "true")
        public void onCredits(List<String> bodies) {
            SIZES.add(bodies.size());
            BODIES.addAll(bodies);
            for (String body : bodies) {
                if (body.startsWith("poison")) {
                    throw new IllegalStateException("cannot process this credit");
                }
                String[] parts = body.split(":");
                jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(parts[1]),
                        parts[0]);
            }
        }
    }
}
