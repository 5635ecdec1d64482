package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresSettings;
import java.net.URI;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The properties every test of the plain-JDBC sample service starts it with: the local PostgreSQL in a schema of the
 * test's own, a RabbitMQ broker, the sample's queue, idempotent listeners with 3 attempts 20-100 ms apart, and no JPA
 * (the sample's JPA twin has its own test).
 */
final class SampleServiceProperties {
    private SampleServiceProperties() {
    }

    static void register(DynamicPropertyRegistry registry, String schema, String queue, URI rabbit) {
        servers(registry, schema, rabbit);
        registry.add("sample.queue", () -> queue);
        registry.add("idemkit.rabbit.idempotent-listeners", () -> "true");
        fastRetriesWithoutJpa(registry);
    }

    /** 3 attempts 20-100 ms apart, and no JPA: the sample services' listeners (RabbitMQ and Kafka). */
    static void fastRetriesWithoutJpa(DynamicPropertyRegistry registry) {
        registry.add("idemkit.retry.max-attempts", () -> "3");
        registry.add("idemkit.retry.base-delay", () -> "20ms");
        registry.add("idemkit.retry.max-delay", () -> "100ms");
        registry.add("spring.autoconfigure.exclude", () -> "org.springframework.boot.hibernate.autoconfigure"
                + ".HibernateJpaAutoConfiguration,org.springframework.boot.data.jpa.autoconfigure"
                + ".DataJpaRepositoriesAutoConfiguration");
    }

    /** The local PostgreSQL in {@code schema} (search path and idemkit's tables) and the RabbitMQ broker. */
    static void servers(DynamicPropertyRegistry registry, String schema, URI rabbit) {
        PostgresSettings pg = PostgresSettings.fromEnvironment();
        String url = pg.url() + (pg.url().contains("?") ? "&" : "?") + "currentSchema=" + schema;
        registry.add("spring.datasource.url", () -> url);
        registry.add("spring.datasource.username", pg::user);
        registry.add("spring.datasource.password", pg::password);
        registry.add("spring.rabbitmq.host", rabbit::getHost);
        registry.add("spring.rabbitmq.port", () -> rabbit.getPort() > 0 ? rabbit.getPort() : 5672);
        registry.add("idemkit.postgres.schema", () -> schema);
    }

    /**
     * The command-line arguments of a sample service run as a JVM of its own (the crash tests): the local PostgreSQL in
     * {@code schema} with a pool of 4, the RabbitMQ broker, no web server, warnings only.
     */
    static java.util.List<String> childArgs(String schema, URI rabbit) {
        PostgresSettings pg = PostgresSettings.fromEnvironment();
        String url = pg.url() + (pg.url().contains("?") ? "&" : "?") + "currentSchema=" + schema;
        return java.util.List.of("--spring.datasource.url=" + url, "--spring.datasource.username=" + pg.user(),
                "--spring.datasource.password=" + pg.password(), "--spring.datasource.hikari.maximum-pool-size=4",
                "--spring.rabbitmq.host=" + rabbit.getHost(),
                "--spring.rabbitmq.port=" + (rabbit.getPort() > 0 ? rabbit.getPort() : 5672),
                "--spring.main.web-application-type=none", "--logging.level.root=WARN",
                "--idemkit.postgres.schema=" + schema);
    }

    /** After a test class: its schema dropped, its queue and the settle paths idemkit declared for it deleted. */
    static void dropSchemaAndQueue(String schema, String queue, URI rabbit) {
        dev.idemkit.testsupport.TestPostgres.dropSchema(schema);
        try (var transport = new dev.idemkit.adapters.rabbit.RabbitMessageTransport(
                dev.idemkit.adapters.rabbit.RabbitSettings.defaults().withUri(rabbit))) {
            transport.deleteTopology(queue);
        }
    }
}
