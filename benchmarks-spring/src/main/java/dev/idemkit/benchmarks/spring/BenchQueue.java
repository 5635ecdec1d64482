package dev.idemkit.benchmarks.spring;

import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The queue every benchmarked service listens to, declared the same way by each ({@code bench.queue}: durable, and
 * dead-lettering into idemkit's dead-letter queue as the starter recommends), so that only the listener differs.
 */
@Configuration(proxyBeanMethods = false)
public class BenchQueue {
    @Bean
    Queue creditsQueue(@Value("${bench.queue}") String name) {
        return new Queue(name, true, false, false, RabbitAdoptedDeliveries.workQueueArguments(name));
    }
}
