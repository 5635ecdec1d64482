package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The Spring listener's settle path under SIGKILL: a Spring Boot service ({@link SpringCrashChild}) in a JVM of its
 * own, killed from outside inside the listener's effect, after the commit before the container's ack, and between a
 * retry's confirmed copy and the ack, {@link #KILLS} times per point, restarted each time; then a healthy instance
 * drains the queue; the same with a batch listener (Spring AMQP consumer batching, 4 per batch, through the batch
 * flow; full tier). Every message credits an account of its own by 1, so the balances say exactly what was lost (0)
 * and what was applied twice (above 1). The harness is shown to bite: the deliberately broken build, whose container
 * acknowledges before the effect's transaction commits, loses the credit it was killed inside.
 */
class SpringListenerCrashIT {
    /**
     * Kills per crash point: 1 here, which kills every point of the path once (the suite's time budget; each Spring
     * child costs a Boot start); {@code SpringListenerCrashSlowIT} (the full tier) kills 20 times, at varying hits.
     */
    static final int KILLS = 1;
    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final URI RABBIT = URI.create(TestRabbit.URI);

    @Test
    void killedAtEveryPointOfTheListenersSettlePathLosesNothingAndAppliesNothingTwice() throws Exception {
        assertThat(run(KILLS).describe()).isEqualTo(exact());
    }

    /**
     * Full tier (the suite's time budget): the batch listener's messages settle through the one batch flow, whose
     * points {@code CrashHarnessIT} (app) kills in the README's test command on every transport, batched; the
     * container's acknowledgement after the commit is killed above, single. {@code SpringListenerCrashSlowIT} kills
     * the batch listener 20 times per point.
     */
    @Test
    @org.junit.jupiter.api.Tag("slow")
    void aBatchListenerKilledAtEveryPointOfTheBatchSettlePathLosesNothingAndAppliesNothingTwice() throws Exception {
        assertThat(run(1, true).describe()).isEqualTo(exact());
    }

    /** The broken build in batch mode (the full tier runs it: the single mode's shows the harness bites here). */
    static Report brokenBatch() throws Exception {
        try (Harness h = new Harness("async-commit", true)) {
            h.publishRound();
            h.killAt(SpringCrashChild.INSIDE_EFFECT, 1);
            Report r = h.drainAndReport();
            System.out.println("spring-crash batch broken " + r.describe());
            return r;
        }
    }

    @Test
    void aBuildWhoseContainerAcknowledgesBeforeTheCommitLosesTheCreditItWasKilledInside() throws Exception {
        try (Harness h = new Harness("async-commit", false)) {
            h.publishRound();
            h.killAt(SpringCrashChild.INSIDE_EFFECT, 1);
            Report r = h.drainAndReport();
            System.out.println("spring-crash broken " + r.describe());
            assertThat(r.lost).as("credits lost by the build that acks before it commits: " + r.describe())
                    .isPositive();
        }
    }

    static Report run(int kills) throws Exception {
        return run(kills, false);
    }

    /** {@code kills} per point, the listener a batch listener when {@code batch}. */
    static Report run(int kills, boolean batch) throws Exception {
        try (Harness h = new Harness(null, batch)) {
            for (String point : List.of(SpringCrashChild.INSIDE_EFFECT, SpringCrashChild.AFTER_COMMIT_BEFORE_ACK,
                    SpringCrashChild.RETRY_REPUBLISHED_BEFORE_ACK)) {
                for (int k = 0; k < kills; k++) {
                    h.publishRound();
                    // vary where in the stream the kill lands; a round has two messages that fail once (retries)
                    int hit = point.equals(SpringCrashChild.RETRY_REPUBLISHED_BEFORE_ACK) ? 1 + k % 2 : 1 + k % 3;
                    long started = System.nanoTime();
                    h.killAt(point, hit);
                    System.out.println("spring-crash-step " + point + " kill " + (k + 1) + " hit " + hit + " "
                            + (System.nanoTime() - started) / 1_000_000 + " ms");
                }
            }
            Report r = h.drainAndReport();
            System.out.println("spring-crash " + (batch ? "batch " : "") + r.describe());
            return r;
        }
    }

    private static String exact() {
        return "lost=0 twice=0 dead-lettered=0 left-in-queues=0";
    }

    /** What the balances, the keys and the queues say after the drain. */
    record Report(int messages, long lost, long twice, long keys, long deadLettered, long leftInQueues) {
        String describe() {
            return "lost=" + lost + " twice=" + twice + " dead-lettered=" + deadLettered + " left-in-queues="
                    + leftInQueues;
        }
    }

    /** One schema, one queue and its settle paths, the child service's runs, and the plan of what was published. */
    static final class Harness implements AutoCloseable {
        private final String schema = TestPostgres.uniqueSchema("spring_crash");
        private final String queue = TestRabbit.unique("spring-crash");
        private final String broken;
        private final boolean batch;
        private final Connection rabbit;
        private final Channel publisher;
        private final List<String> accounts = new ArrayList<>();
        private int published;

        Harness(String broken, boolean batch) throws Exception {
            this.broken = broken;
            this.batch = batch;
            try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
                s.execute("CREATE TABLE " + schema + ".accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
                s.execute("CREATE TABLE " + schema + ".failed_once (id text PRIMARY KEY)");
            }
            rabbit = TestRabbit.rawConnection("idemkit-it-spring-crash");
            publisher = rabbit.createChannel();
            // the service's queue, as its bean declares it
            publisher.queueDeclare(queue, true, false, false,
                    dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries.workQueueArguments(queue));
            publisher.confirmSelect();
        }

        /**
         * Twelve deliveries: eight new messages, two of which fail their first attempt, and two redeliveries of each of
         * two of them (same id, same body), every message crediting an account of its own by 1.
         */
        void publishRound() throws Exception {
            List<String[]> round = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String id = "m-" + UUID.randomUUID();
                String account = "acc-" + id;
                accounts.add(account);
                round.add(new String[] {id, (i < 2 ? "once:" : "") + account + ":1"});
            }
            try (java.sql.Connection c = TestPostgres.connect();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema + ".accounts VALUES (?, 0)")) {
                for (String[] m : round) {
                    ps.setString(1, m[1].substring(m[1].indexOf("acc-"), m[1].lastIndexOf(':')));
                    ps.executeUpdate();
                }
            }
            List<String[]> sends = new ArrayList<>(round);
            sends.add(round.get(2));
            sends.add(round.get(5));
            sends.add(round.get(2));
            sends.add(round.get(0));
            for (String[] m : sends) {
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(m[0]).deliveryMode(2)
                        .contentType("text/plain").build();
                publisher.basicPublish("", queue, props, m[1].getBytes(StandardCharsets.UTF_8));
            }
            publisher.waitForConfirmsOrDie(10_000);
            published += sends.size();
        }

        ChildJvm start(String point, int hit) throws Exception {
            Map<String, String> props = new java.util.LinkedHashMap<>();
            props.put("idemkit.crash.point", point == null ? "" : point);
            props.put("idemkit.crash.hit", Integer.toString(hit));
            if (broken != null) {
                props.put("idemkit.crash.broken", broken);
            }
            List<String> args = new ArrayList<>(SampleServiceProperties.childArgs(schema, RABBIT));
            args.addAll(List.of("--spring.rabbitmq.listener.simple.concurrency=2",
                    "--spring.rabbitmq.listener.simple.prefetch=5", "--crash.queue=" + queue,
                    "--idemkit.rabbit.idempotent-listeners=true", "--idemkit.retry.base-delay=50ms",
                    "--idemkit.retry.max-delay=200ms", "--crash.batch=" + batch,
                    "--spring.rabbitmq.listener.simple.consumer-batch-enabled=" + batch,
                    "--spring.rabbitmq.listener.simple.batch-size=4"));
            return ChildJvm.of(SpringCrashChild.class.getName()).properties(props)
                    .log(java.nio.file.Path.of("target", "child-logs"), "spring-crash-" + (point == null ? "drain"
                            : point) + "-" + UUID.randomUUID().toString().substring(0, 8))
                    .args(args).start();
        }

        /** Starts the service armed at {@code point}, waits until a thread stopped there, and SIGKILLs it. */
        void killAt(String point, int hit) throws Exception {
            try (ChildJvm child = start(point, hit)) {
                CrashChildren.killWhenStopped(child, point, hit, PATIENCE);
            }
        }

        /** A healthy instance until every account was credited and the queues are empty; then the totals. */
        Report drainAndReport() throws Exception {
            // a graceful stop gives back what the container had fetched but not yet handed to the listener (redeliveries
            // of credited messages, by then): another instance acks those as duplicates; at most a few rounds
            for (int round = 0; round < 4; round++) {
                try (ChildJvm child = start(null, 1)) {
                    child.awaitLine("READY", PATIENCE).orElseThrow(() -> new AssertionError("no READY; log: "
                            + child.log()));
                    long deadline = System.nanoTime() + PATIENCE.toNanos();
                    // settled: nothing ready in the queues and nothing unacknowledged (a lost credit never shows up in
                    // the balances, so the balances alone are not what is waited for)
                    while (System.nanoTime() < deadline && !(inQueues() == 0 && unacknowledged() == 0)) {
                        Thread.sleep(100);
                    }
                    assertThat(child.terminate()).as("a graceful stop; log: " + child.log()).isIn(0, 143);
                }
                if (inQueues() == 0) {
                    break;
                }
            }
            long lost;
            long twice;
            try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT count(*) FILTER (WHERE balance = 0), count(*) FILTER (WHERE"
                            + " balance > 1) FROM " + schema + ".accounts")) {
                rs.next();
                lost = rs.getLong(1);
                twice = rs.getLong(2);
            }
            long keys;
            try (java.sql.Connection c = TestPostgres.connect();
                    PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + schema
                            + ".processed_messages WHERE consumer = ?")) {
                ps.setString(1, IdempotentListenerAdvice.consumerOf(queue));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    keys = rs.getLong(1);
                }
            }
            long dead = TestRabbit.readyOrZero(rabbit, queue + ".dlq");
            if (dead > 0) {
                printDeadLetters();
            }
            return new Report(published, lost, twice, keys, dead, inQueues());
        }

        /** Each dead letter's id, body, reason and attempts (what the report's count alone does not say). */
        private void printDeadLetters() throws Exception {
            try (Channel ch = rabbit.createChannel()) {
                for (com.rabbitmq.client.GetResponse r = ch.basicGet(queue + ".dlq", false); r != null;
                        r = ch.basicGet(queue + ".dlq", false)) {
                    Map<String, Object> h = r.getProps().getHeaders();
                    System.out.println("spring-crash dead letter " + r.getProps().getMessageId() + " body="
                            + new String(r.getBody(), StandardCharsets.UTF_8) + " reason="
                            + (h == null ? null : h.get(dev.idemkit.domain.deadletter.DeadLetterHeaders.REASON))
                            + " attempts=" + (h == null ? null : h.get(
                                    dev.idemkit.domain.deadletter.DeadLetterHeaders.ATTEMPTS)));
                }
            }
        }

        /** Messages of the queue delivered to a consumer and not yet acknowledged, as the broker counts them. */
        private long unacknowledged() throws Exception {
            for (String line : TestRabbit.rabbitmqctl("list_queues", "name", "messages_unacknowledged").split("\n")) {
                String[] f = line.trim().split("\\s+");
                if (f.length == 2 && f[0].equals(queue)) {
                    return Long.parseLong(f[1]);
                }
            }
            return 0;
        }

        /** Messages ready in the queue, its retry bucket and its hold queue (unacked ones count once their consumer is gone). */
        private long inQueues() throws Exception {
            return TestRabbit.readyOrZero(rabbit, queue) + TestRabbit.readyOrZero(rabbit, queue + ".retry.1s")
                    + TestRabbit.readyOrZero(rabbit, queue + ".dlq.hold");
        }

        @Override
        public void close() throws Exception {
            try {
                rabbit.close();
            } finally {
                try (RabbitMessageTransport t = new RabbitMessageTransport(RabbitSettings.defaults().withUri(RABBIT))) {
                    t.deleteTopology(queue);
                } finally {
                    TestPostgres.dropSchema(schema);
                }
            }
        }
    }
}
