package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.spring.outboxsample.OrderService;
import dev.idemkit.spring.outboxsample.Orders;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The outbox in a Spring service ({@link OrderService}) against the local PostgreSQL and RabbitMQ: an order and its
 * event commit together or not at all, the starter's relay publishes each committed event to the idempotent listener
 * once and in commit order per key, a destination without a queue is parked and shown by health and the meters, and
 * misuse is refused with the property or the rule to change. Its properties are {@code outbox.properties}, which the
 * root README shows verbatim ({@link StarterReadmeTest}), with the test's own schema and queue.
 */
@SpringBootTest(classes = OrderService.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
@org.springframework.test.context.TestPropertySource(locations = "classpath:outbox.properties")
class OutboxSampleServiceIT {
    private static final String RUN = Names.tag(12);
    private static final URI RABBIT = URI.create(TestRabbit.URI);
    private static final String SCHEMA = "idemkit_outbox_" + RUN;
    private static final String QUEUE = "idemkit.spring.orders." + RUN;
    private static final String MISSING_QUEUE = "idemkit.spring.nobody." + RUN;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws Exception {
        createOrders(SCHEMA);
        SampleServiceProperties.register(registry, SCHEMA, QUEUE, RABBIT);
        registry.add("orders.queue", () -> QUEUE);
        registry.add("idemkit.outbox.destinations.order-lost", () -> MISSING_QUEUE);
        registry.add("idemkit.outbox.retry.max-attempts", () -> "2");
        registry.add("idemkit.outbox.retry.base-delay", () -> "10ms");
        registry.add("idemkit.outbox.retry.max-delay", () -> "20ms");
        registry.add("spring.rabbitmq.listener.simple.concurrency", () -> "1"); // one consumer: arrival order is seen
    }

    /** The sample's table, in the test's schema (idemkit creates its own tables there at start-up). */
    static void createOrders(String schema) throws Exception {
        try (Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            s.execute("CREATE TABLE " + schema + ".orders (id text PRIMARY KEY, total bigint NOT NULL,"
                    + " paid boolean NOT NULL DEFAULT false, events text NOT NULL DEFAULT '')");
        }
    }

    @AfterAll
    static void dropSchemaAndQueues() {
        SampleServiceProperties.dropSchemaAndQueue(SCHEMA, QUEUE, RABBIT);
    }

    @Autowired
    Orders orders;
    @Autowired
    IdemkitOutbox outbox;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    TransactionTemplate transactions;
    @Autowired
    MeterRegistry meters;
    @Autowired
    IdemkitOutboxHealthIndicator health;

    @Test
    void eachCommittedOrdersEventsReachTheListenerOnceInCommitOrder() {
        List<String> ids = IntStream.range(0, 40).mapToObj(i -> "o-" + RUN + "-" + i).toList();
        for (int i = 0; i < ids.size(); i++) {
            orders.place(ids.get(i), 100);
            if (i % 2 == 0) {
                orders.pay(ids.get(i)); // right behind its placement: both may be in one relay pass
            }
        }

        Awaitility.await("every event applied").atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM orders WHERE id LIKE ? AND events <> '' AND (NOT paid OR events LIKE '%paid%')",
                Long.class, "o-" + RUN + "-%") == ids.size());
        Map<String, Long> byEvents = eventsOf(ids);
        assertThat(byEvents).as("each order's events, once each, placed before paid")
                .containsExactlyInAnyOrderEntriesOf(Map.of("order-placed;order-paid;", 20L, "order-placed;", 20L));
        assertThat(meters.get(MicrometerOutboxMeters.PUBLISHED).counter().count()).as("published and marked sent")
                .isGreaterThanOrEqualTo(60);
        assertThat(meters.find(MicrometerInboxMeters.DELIVERIES).tag("outcome", "duplicate").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum())
                .as("the relay published each event once: the listener's inbox absorbed nothing").isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_messages WHERE ordering_key LIKE ? AND sent_at IS"
                + " NULL", Long.class, "order-o-" + RUN + "-%")).as("nothing left unsent").isZero();
    }

    @Test
    void anOrderAndItsEventCommitTogetherOrNotAtAll() {
        String id = "f-" + RUN;
        assertThatThrownBy(() -> orders.placeThenFail(id, 5)).hasMessage("failed after the append");

        assertThat(jdbc.queryForObject("SELECT count(*) FROM orders WHERE id = ?", Long.class, id)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_messages WHERE ordering_key = ?", Long.class,
                "order-" + id)).as("no event without its order").isZero();

        String kept = "k-" + RUN;
        orders.place(kept, 5);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_messages WHERE ordering_key = ?", Long.class,
                "order-" + kept)).as("the committed order's event").isOne();
    }

    @Test
    void anAppendOutsideATransactionOrOfAnUnknownEventTypeIsRefusedBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> outbox.append("order-placed", "k", "x")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no Spring transaction is active");
        assertThatThrownBy(() -> transactions.executeWithoutResult(s -> outbox.append("order-shipped", "k", "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("set idemkit.outbox.destinations.order-shipped");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_messages WHERE ordering_key = 'k'", Long.class))
                .isZero();
    }

    @Test
    void anEventForAQueueThatDoesNotExistIsParkedAndHealthAndTheMetersSaySo() {
        String key = "lost-" + RUN;
        transactions.executeWithoutResult(s -> outbox.append("order-lost", key, "lost:" + key));

        Awaitility.await("parked after 2 attempts").atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM outbox_messages WHERE ordering_key = ? AND parked_at IS NOT NULL", Long.class,
                key) == 1);
        assertThat(jdbc.queryForObject("SELECT park_reason FROM outbox_messages WHERE ordering_key = ?", String.class,
                key)).contains("no queue " + MISSING_QUEUE);
        Health h = health.health();
        assertThat(h.getStatus()).as("an operator's alert, not a reason to stop serving").isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("parked", 1L).containsEntry("alert", true)
                .containsEntry("transport", "UP");
        assertThat(meters.get(MicrometerOutboxMeters.PARKED).counter().count()).isEqualTo(1);
        assertThat(meters.get(MicrometerOutboxMeters.FAILED).counter().count()).as("the first attempt's failure")
                .isGreaterThanOrEqualTo(1);
        Awaitility.await("the gauges read").atMost(Duration.ofSeconds(15)).until(() ->
                meters.get(MicrometerOutboxMeters.PARKED_ROWS).gauge().value() == 1.0);
        // cleared for the other tests' health: the operator's discard
        jdbc.update("DELETE FROM outbox_messages WHERE ordering_key = ?", key);
    }

    @Test
    void theStartIsRefusedWithoutDestinationsOrATransportNamingWhatToChange() {
        ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                IdemkitAutoConfiguration.class, IdemkitPostgresAutoConfiguration.class,
                IdemkitOutboxAutoConfiguration.class)).withBean(javax.sql.DataSource.class, OutboxSampleServiceIT::plain)
                .withPropertyValues("idemkit.postgres.schema=" + SCHEMA, "idemkit.outbox.enabled=true");
        runner.run(context -> assertThat(context.getStartupFailure()).rootCause().isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("set idemkit.outbox.destinations.<event type>=<queue>"));
        runner.withPropertyValues("idemkit.outbox.destinations.a=q").run(context -> assertThat(
                context.getStartupFailure()).rootCause().isInstanceOf(StartupRefusal.class)
                .hasMessageContaining("needs exactly one transport to publish with (found 0)"));
        runner.withPropertyValues("idemkit.outbox.destinations.a=bad\u0001name").run(context -> assertThat(
                context.getStartupFailure()).hasStackTraceContaining("idemkit.outbox.destinations.a: the destination has a"
                + " control character"));
        runner.withPropertyValues("idemkit.outbox.enabled=false").run(context -> assertThat(context)
                .hasNotFailed().doesNotHaveBean(IdemkitOutbox.class).doesNotHaveBean(IdemkitOutboxRelay.class));
    }

    /** A data source of its own (a context's close would close the service's pool). */
    private static javax.sql.DataSource plain() {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        dev.idemkit.adapters.postgres.PostgresSettings pg = dev.idemkit.adapters.postgres.PostgresSettings.fromEnvironment();
        ds.setURL(pg.url() + (pg.url().contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA);
        ds.setUser(pg.user());
        ds.setPassword(pg.password());
        return ds;
    }

    private Map<String, Long> eventsOf(List<String> ids) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        for (String id : ids) {
            counts.merge(jdbc.queryForObject("SELECT events FROM orders WHERE id = ?", String.class, id), 1L, Long::sum);
        }
        return counts;
    }
}
