package dev.idemkit.spring.kafkasample;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * A small Spring Boot service with one {@code @KafkaListener} crediting accounts in PostgreSQL, made idempotent by
 * configuration ({@code idemkit.kafka.idempotent-listeners=true}); it knows nothing of idemkit. Its tests start it
 * against the local PostgreSQL and a real Kafka broker, in-process ({@code KafkaListenerServiceIT}) and as a JVM of
 * its own that is SIGKILLed ({@code KafkaListenerCrashIT}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = {
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
        "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration"})
@Import(KafkaCredits.class)
public class KafkaSampleService {
    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(KafkaSampleService.class);
        app.setBannerMode(org.springframework.boot.Banner.Mode.OFF);
        app.run(args);
    }

    /** Boot's metrics auto-configuration is not on this test's class path: a registry of the service's own. */
    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }
}
