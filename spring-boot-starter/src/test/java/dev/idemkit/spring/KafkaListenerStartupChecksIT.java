package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.spring.kafkasample.KafkaSampleService;
import dev.idemkit.testsupport.TestPostgres;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What the idempotent {@code @KafkaListener}s refuse at start-up, before a record is taken, each with a message that
 * says what to change: settings under which a record could be skipped, acknowledged without its commit, or not be
 * keyed by its bytes. The Kafka sample service against the local PostgreSQL and no broker (nothing starts consuming).
 */
class KafkaListenerStartupChecksIT {
    private final String schema = TestPostgres.uniqueSchema("idemkit_kafka_checks");

    @org.junit.jupiter.api.BeforeEach
    void createSchema() throws Exception {
        try (java.sql.Connection c = TestPostgres.connect(); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema); // the sample creates its tables at start, before any refusal
        }
    }

    @AfterEach
    void dropSchema() {
        TestPostgres.dropSchema(schema);
    }

    private Throwable refusal(Class<?> extra, String... properties) {
        PostgresSettings pg = PostgresSettings.fromEnvironment();
        String url = pg.url() + (pg.url().contains("?") ? "&" : "?") + "currentSchema=" + schema;
        List<String> props = new ArrayList<>(List.of("spring.datasource.url=" + url,
                "spring.datasource.username=" + pg.user(), "spring.datasource.password=" + pg.password(),
                "idemkit.postgres.schema=" + schema, "spring.kafka.bootstrap-servers=127.0.0.1:1",
                "sample.topic=checks", "sample.group=checks", "idemkit.kafka.idempotent-listeners=true"));
        // (no logging.level here: logback is one per JVM, and QuickStartIT reads the INFO lines of its own start)
        props.addAll(List.of(properties));
        Throwable[] thrown = new Throwable[1];
        assertThatThrownBy(() -> {
            SpringApplicationBuilder b = new SpringApplicationBuilder(KafkaSampleService.class)
                    .web(WebApplicationType.NONE).properties(props.toArray(String[]::new));
            if (extra != null) {
                b.sources(extra);
            }
            try (ConfigurableApplicationContext ignored = b.run()) {
                // started: the assertion below fails
            }
        }).satisfies(t -> thrown[0] = t);
        Throwable root = thrown[0];
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root;
    }

    @Test
    void aValueDeserializerOtherThanStringOrBytesIsRefused() {
        assertThat(refusal(null, "spring.kafka.consumer.value-deserializer="
                + "org.apache.kafka.common.serialization.LongDeserializer"))
                .isInstanceOf(StartupRefusal.class).hasMessageContaining("StringDeserializer or a ByteArrayDeserializer")
                .hasMessageContaining("LongDeserializer").hasMessageContaining("spring.kafka.consumer.value-deserializer");
    }

    @Test
    void batchListenersAreRefused() {
        assertThat(refusal(null, "spring.kafka.listener.type=batch")).isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("spring.kafka.listener.type must be single");
    }

    @Test
    void manualAcknowledgementIsRefused() {
        assertThat(refusal(null, "spring.kafka.listener.ack-mode=manual")).isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("kafka-credits").hasMessageContaining("acknowledges manually");
    }

    @Test
    void autoCommitIsRefused() {
        assertThat(refusal(null, "spring.kafka.consumer.enable-auto-commit=true")).isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("kafka-credits").hasMessageContaining("enable-auto-commit=false");
    }

    @Test
    void aGroupThatMakesNoValidInboxConsumerNameIsRefused() {
        assertThat(refusal(null, "sample.group=credits group")).isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("kafka-credits").hasMessageContaining("no valid inbox consumer name");
    }

    @Test
    void aListenersOwnValueDeserializerIsCheckedToo() {
        assertThat(refusal(null, "sample.listener-properties=value.deserializer="
                + "org.apache.kafka.common.serialization.LongDeserializer")).isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("@KafkaListener kafka-credits").hasMessageContaining("LongDeserializer");
    }
}
