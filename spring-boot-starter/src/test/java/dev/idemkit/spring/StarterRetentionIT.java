package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.testsupport.TestPostgres;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Retention runs itself in a Spring service: the starter deletes inbox keys past {@code idemkit.retention.inbox},
 * expired Idempotency-Key records and sent outbox rows on its schedule, keeps the rest, and reports it in the service's
 * registry; a dedup window shorter than the listeners' retries, or a policy outside its bounds, stops the start saying
 * which property; {@code idemkit.retention.enabled=false} leaves the tables to the service.
 */
class StarterRetentionIT {
    private static final PostgresSettings PG = PostgresSettings.fromEnvironment();
    private final String schema = TestPostgres.uniqueSchema("idemkit_retention");
    private final PGSimpleDataSource ds = new PGSimpleDataSource();

    StarterRetentionIT() {
        ds.setURL(PG.url() + (PG.url().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        ds.setUser(PG.user());
        ds.setPassword(PG.password());
    }

    @AfterEach
    void dropSchema() {
        TestPostgres.dropSchema(schema);
    }

    private ApplicationContextRunner service(String... properties) {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdemkitAutoConfiguration.class,
                        IdemkitPostgresAutoConfiguration.class))
                .withBean(DataSource.class, () -> ds).withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("idemkit.postgres.schema=" + schema).withPropertyValues(properties);
    }

    @Test
    void theStarterDeletesWhatIsPastRetentionOnItsScheduleAndCountsIt() {
        service("idemkit.retention.every=200ms", "idemkit.retention.batch-size=100").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(IdemkitRetention.class);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint, processed_at)"
                        + " SELECT 'rabbit-listener/q', 'old-' || g, 'f', now() - interval '8 days'"
                        + " FROM generate_series(1, 250) g");
                s.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint, processed_at)"
                        + " VALUES ('rabbit-listener/q', 'recent', 'f', now() - interval '1 hour')");
                s.execute("INSERT INTO idempotency_records (client_id, idem_key, fingerprint, state, created_at,"
                        + " expires_at) VALUES ('a', 'expired', 'f', 'in_progress', now() - interval '2 days',"
                        + " now() - interval '1 day'), ('a', 'live', 'f', 'in_progress', now(), now() + interval '1 day')");
                s.execute("INSERT INTO outbox_messages (id, destination, ordering_key, headers, body, sent_at)"
                        + " VALUES (gen_random_uuid(), 'd', 'k', '{}', '\\x00', now() - interval '2 days'),"
                        + " (gen_random_uuid(), 'd', 'k', '{}', '\\x00', NULL)");
            }
            MeterRegistry registry = context.getBean(MeterRegistry.class);

            Awaitility.await("a retention run").atMost(Duration.ofSeconds(30)).until(() ->
                    deleted(registry, "processed_messages") == 250 && deleted(registry, "idempotency_records") == 1
                            && deleted(registry, "outbox_messages") == 1);

            assertThat(count("processed_messages")).as("the key inside the window").isOne();
            assertThat(count("idempotency_records")).as("the live record").isOne();
            assertThat(count("outbox_messages")).as("the unsent row").isOne();
            double oldestHours = registry.get(MicrometerRetentionMeters.OLDEST_INBOX_KEY_AGE).timeGauge()
                    .value(TimeUnit.HOURS);
            assertThat(oldestHours).as("the oldest inbox key kept, an hour old").isBetween(0.9, 1.5);
            assertThat(registry.get(MicrometerRetentionMeters.CAUGHT_UP).gauge().value()).isEqualTo(1.0);
        });
    }

    @Test
    void aDedupWindowShorterThanTheListenersRetriesStopsTheStartNamingTheProperty() {
        service("idemkit.retention.inbox=1s", "idemkit.retry.max-attempts=4").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(StartupRefusal.class)
                    .hasMessageContaining("idemkit.retention.inbox PT1S is shorter than the idempotent listeners'"
                            + " longest retry horizon PT1.4S");
        });
    }

    @Test
    void aPolicyOutsideItsBoundsStopsTheStartNamingIt() {
        service("idemkit.retention.batch-size=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(
                    "retention batch size must be 1 to 100000, got 0");
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idemkit.retention.*");
        });
        service("idemkit.retention.every=0s").run(context -> assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("idemkit.retention.every must be at least 1ms"));
    }

    @Test
    void disabledItLeavesTheTablesToTheService() {
        service("idemkit.retention.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(IdemkitRetention.class);
            assertThat(context).hasSingleBean(IdempotentInbox.class);
        });
    }

    private static double deleted(MeterRegistry registry, String table) {
        var counter = registry.find(MicrometerRetentionMeters.DELETED).tag("table", table).counter();
        return counter == null ? 0 : counter.count();
    }

    private long count(String table) throws Exception {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM "
                + table); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
