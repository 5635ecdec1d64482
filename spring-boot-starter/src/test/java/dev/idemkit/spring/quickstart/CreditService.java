package dev.idemkit.spring.quickstart;

import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

@SpringBootApplication
public class CreditService {
    public static void main(String[] args) {
        SpringApplication.run(CreditService.class, args);
    }

    // durable, and what the broker itself dead-letters (a reject, a quorum queue's delivery limit)
    // goes to idemkit's dead-letter queue too, instead of being dropped
    @Bean
    Queue credits(@Value("${credits.queue}") String name) {
        return new Queue(name, true, false, false, RabbitAdoptedDeliveries.workQueueArguments(name));
    }
}
