package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Spring outbox under SIGKILL: the sample order service ({@link OutboxCrashChild}) in a JVM of its own places
 * orders (each order and its events in one transaction) while the starter's relay publishes them to its idempotent
 * listener; it is killed between an order's commit and the publish of its event, and between the broker's confirm and
 * the relay's record of it, then restarted until everything is relayed. Every committed order's events are applied
 * exactly once, in order: the event of the first kill is published by the next start, the second one's is published
 * again with the same id and absorbed by the listener's inbox. The harness bites: the build that publishes the event
 * itself after its commit (the dual write the outbox replaces) loses the order's event it was killed on.
 */
class SpringOutboxCrashIT {
    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final URI RABBIT = URI.create(TestRabbit.URI);
    /** An order's events, once each, in commit order. */
    private static final String EXPECTED = "CASE WHEN paid THEN 'order-placed;order-paid;' ELSE 'order-placed;' END";
    /** An order that lacks one of its committed events. */
    private static final String MISSING = "(events NOT LIKE '%order-placed;%' OR (paid AND events NOT LIKE"
            + " '%order-paid;%'))";
    /** How long a drain waits, with nothing left to relay or consume, for an order's events that may never come. */
    private static final Duration QUIET = Duration.ofSeconds(3);

    @Test
    void killedBetweenTheCommitAndThePublishAndBetweenTheConfirmAndTheMarkEveryEventIsAppliedOnce() throws Exception {
        try (Harness h = new Harness(null)) {
            h.killAt(OutboxCrashChild.COMMITTED_BEFORE_PUBLISH, 1, "a");
            h.killAt(OutboxCrashChild.PUBLISHED_BEFORE_MARK, 2, "b");
            Report r = h.drainAndReport();
            System.out.println("spring-outbox-crash " + r);
            assertThat(r.orders()).as("orders committed before the kills").isPositive();
            assertThat(r.describe()).isEqualTo("lost=0 twice=0 out-of-order=0 unsent=0");
            assertThat(r.duplicatesAbsorbed()).as("the event confirmed but not recorded was published again and the"
                    + " listener's inbox absorbed it").isPositive();
        }
    }

    /** The full tier runs it (a Boot start per run); it was watched failing with lost=1 when it was written. */
    @Test
    @Tag("slow")
    void aServiceThatPublishesAfterItsCommitLosesTheEventItWasKilledOn() throws Exception {
        try (Harness h = new Harness("dual-write")) {
            h.killAt(OutboxCrashChild.COMMITTED_BEFORE_PUBLISH, 1, "a");
            Report r = h.drainAndReport();
            System.out.println("spring-outbox-crash broken " + r);
            assertThat(r.lost()).as("events lost by the dual write: " + r.describe()).isPositive();
        }
    }

    record Report(long orders, long lost, long twice, long outOfOrder, long unsent, long duplicatesAbsorbed) {
        String describe() {
            return "lost=" + lost + " twice=" + twice + " out-of-order=" + outOfOrder + " unsent=" + unsent;
        }
    }

    /** A schema with the sample's table, a queue of its own, and the child service's runs. */
    static final class Harness implements AutoCloseable {
        private final String tag = Names.tag(10);
        private final String schema = "idemkit_spring_outbox_crash_" + tag;
        private final String queue = "idemkit.spring.outbox-crash." + tag;
        private final String broken;

        Harness(String broken) throws Exception {
            this.broken = broken;
            OutboxSampleServiceIT.createOrders(schema);
        }

        ChildJvm start(String point, int hit, int place, String run) throws Exception {
            Map<String, String> props = new java.util.LinkedHashMap<>();
            props.put("idemkit.crash.point", point == null ? "" : point);
            props.put("idemkit.crash.hit", Integer.toString(hit));
            if (broken != null) {
                props.put("idemkit.crash.broken", broken);
            }
            List<String> args = new java.util.ArrayList<>(SampleServiceProperties.childArgs(schema, RABBIT));
            args.addAll(List.of("--spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure"
                    + ".HibernateJpaAutoConfiguration,org.springframework.boot.data.jpa.autoconfigure"
                    + ".DataJpaRepositoriesAutoConfiguration", "--orders.queue=" + queue,
                    "--idemkit.rabbit.idempotent-listeners=true", "--idemkit.retry.base-delay=50ms",
                    "--idemkit.retry.max-delay=200ms", "--idemkit.outbox.enabled=true",
                    "--idemkit.outbox.destinations.order-placed=" + queue,
                    "--idemkit.outbox.destinations.order-paid=" + queue, "--idemkit.outbox.poll-interval=200ms",
                    "--crash.place=" + place, "--crash.run=" + run));
            return ChildJvm.of(OutboxCrashChild.class.getName()).properties(props)
                    .log(java.nio.file.Path.of("target", "child-logs"), "spring-outbox-crash-" + (point == null
                            ? "drain" : point) + "-" + UUID.randomUUID().toString().substring(0, 8))
                    .args(args).start();
        }

        /** Starts the service placing ten orders, armed at {@code point}; SIGKILLs it once a thread stopped there. */
        void killAt(String point, int hit, String run) throws Exception {
            try (ChildJvm child = start(point, hit, 10, run)) {
                String line = child.awaitLine("CRASH-POINT " + point, PATIENCE).orElseThrow(() -> new AssertionError(
                        "the service never reached " + point + " (hit " + hit + "); log: " + child.log()));
                assertThat(line).isEqualTo("CRASH-POINT " + point);
                assertThat(child.kill()).as("killed by SIGKILL").isEqualTo(ChildJvm.SIGKILLED);
            }
            System.out.println("spring-outbox-crash after the kill at " + point + ": " + unsent() + " rows unsent, "
                    + delivered() + " deliveries applied");
        }

        /**
         * A healthy instance until no row is unsent, the queue is empty and every order has its events, or nothing has
         * changed for {@link #QUIET} with nothing unsent or queued (what a lost event looks like); then what the orders
         * say.
         */
        Report drainAndReport() throws Exception {
            long duplicates;
            try (ChildJvm child = start(null, 1, 0, "drain")) {
                child.awaitLine("READY", PATIENCE).orElseThrow(() -> new AssertionError("no READY; log: "
                        + child.log()));
                long deadline = System.nanoTime() + PATIENCE.toNanos();
                List<Long> last = List.of();
                long changed = System.nanoTime();
                while (System.nanoTime() < deadline) {
                    List<Long> now = List.of(unsent(), inQueue(), unapplied());
                    if (now.equals(List.of(0L, 0L, 0L))) {
                        break;
                    }
                    if (!now.equals(last)) {
                        last = now;
                        changed = System.nanoTime();
                    } else if (now.get(0) == 0 && now.get(1) == 0 && System.nanoTime() - changed > QUIET.toNanos()) {
                        break;
                    }
                    Thread.sleep(100);
                }
                child.signalTerm();
                String line = child.awaitLine("DUPLICATES ", PATIENCE).orElseThrow(() -> new AssertionError(
                        "no DUPLICATES line at the stop; log: " + child.log()));
                duplicates = Long.parseLong(line.substring("DUPLICATES ".length()).trim());
                assertThat(child.awaitExit(PATIENCE)).as("a graceful stop; log: " + child.log()).isIn(0, 143);
            }
            try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE " + MISSING + "),"
                            + " count(*) FILTER (WHERE length(events) > length(" + EXPECTED + ")),"
                            + " count(*) FILTER (WHERE events = 'order-paid;order-placed;') FROM " + schema + ".orders")) {
                rs.next();
                return new Report(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), unsent(), duplicates);
            }
        }

        /** Orders whose committed events have not all been applied yet. */
        private long unapplied() throws Exception {
            return count("SELECT count(*) FROM " + schema + ".orders WHERE " + MISSING);
        }

        private long unsent() throws Exception {
            return count("SELECT count(*) FROM " + schema + ".outbox_messages WHERE sent_at IS NULL");
        }

        private long delivered() throws Exception {
            return count("SELECT count(*) FROM " + schema + ".processed_messages");
        }

        private long inQueue() throws Exception {
            try (var rabbit = TestRabbit.rawConnection("idemkit-it-spring-outbox-crash")) {
                return TestRabbit.readyOrZero(rabbit, queue);
            }
        }

        private long count(String sql) throws Exception {
            try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(sql)) {
                rs.next();
                return rs.getLong(1);
            }
        }

        @Override
        public void close() {
            SampleServiceProperties.dropSchemaAndQueue(schema, queue, RABBIT);
        }
    }
}
