package dev.idemkit.app.cluster;

import dev.idemkit.testsupport.RabbitCluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import dev.idemkit.app.CreditPlan;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import dev.idemkit.ports.service.BatchingConsumer;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A real three-node RabbitMQ cluster ({@link RabbitCluster}), quorum queues, two {@code serve}-like instances on one
 * PostgreSQL schema (one consuming a delivery per transaction and connected to node 1 first, one batched and connected
 * to node 2 first) while credits with 30 % duplicate ids are published through both: when a third of the distinct
 * credits are in, the node that leads the work queue gets kill -9 (its consumers and publishers must move to the
 * surviving nodes, the queue elects a new leader). Every account ends with exactly the sum over distinct ids, every
 * distinct id is processed once, nothing is dead-lettered, the queue ends empty; how long consumption paused is
 * measured and written to {@code target/rabbit-cluster.md}.
 *
 * <p>{@value #DEFAULT_MESSAGES} messages here (in {@code verify}); {@link RabbitClusterSlowIT} runs 10,000 and kills
 * twice. The cluster costs 12-14 s to start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // the cluster is this class's (the slow variant runs beside it)
class RabbitClusterIT {
    static final int DEFAULT_MESSAGES = 2_000;
    private static final double DUPLICATES = 0.30;
    private static final int ACCOUNTS = 5;
    private static final int PUBLISHERS = 4;
    private static final Duration PATIENCE = Duration.ofSeconds(180);

    RabbitCluster cluster;

    private String schema;
    private String queue;
    private String run;
    private Assembly first;
    private Assembly second;

    @BeforeAll
    void startCluster() throws Exception {
        assumeTrue(RabbitCluster.available(), "needs the RabbitMQ server scripts in /usr/lib/rabbitmq/bin");
        cluster = RabbitCluster.start(3);
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void start() {
        schema = TestEnvironment.unique("app_it_cluster");
        run = UUID.randomUUID().toString().substring(0, 8);
        queue = AccountCredit.QUEUE + ".cluster-" + run;
        first = Assembly.start(settings(1));
        second = Assembly.start(settings(2));
    }

    private AppSettings settings(int firstNode) {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_CONCURRENCY", "4",
                "IDEMKIT_RABBIT_URI", cluster.uri(firstNode),
                "IDEMKIT_RABBIT_ADDRESSES", String.join(",", cluster.addressesFrom(firstNode)),
                "IDEMKIT_RABBIT_QUEUE_TYPE", "quorum");
        return AppSettings.resolve(Sources.of(Map.of(), env));
    }

    @AfterEach
    void stop() throws Exception {
        try {
            if (first != null) {
                first.close();
            }
            if (second != null) {
                second.close();
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }

    int messages() {
        return DEFAULT_MESSAGES;
    }

    /** Kills, each of the node that leads the queue then, at evenly spaced shares of the distinct credits. */
    int kills() {
        return 1;
    }

    @Test
    void killingTheNodeThatLeadsTheWorkQueueMidStreamLosesNothingAndRunsNoEffectTwice() throws Exception {
        CreditPlan credits = CreditPlan.of(new SplittableRandom(run.hashCode()), messages(), DUPLICATES, ACCOUNTS,
                "cluster-" + run);
        List<OutgoingMessage> plan = credits.messages();
        Map<String, BigDecimal> expected = credits.expectedBalances();
        long distinct = credits.distinct();

        Subscription a = first.transport().subscribe(queue, first.consumer(ConsumerKind.CREDIT_ACCOUNT));
        BatchingConsumer<?> batched = second.batchedConsumer(ConsumerKind.CREDIT_ACCOUNT,
                BatchingConsumer.BatchSettings.defaults().withMaxBatch(50));
        Subscription b = second.transport().subscribe(queue, batched);
        Progress progress = new Progress();
        List<String> killed = new ArrayList<>();
        int lastKilled = 0;
        long began = System.nanoTime();
        try {
            // where the queue's leader and the consumers are, asked before the stream starts (rabbitmqctl takes a second)
            int leader = cluster.leaderOf(queue, 1);
            List<Integer> consumersOnIt = onNode(leader);
            ExecutorService publishers = Executors.newFixedThreadPool(PUBLISHERS);
            // the plan's tail goes out only after the last kill: the stream goes on across every kill by construction,
            // however fast the consumers catch up while a killed node restarts (the full run saw them finish first)
            int tailFrom = plan.size() - plan.size() / (kills() + 2);
            List<Future<Long>> publishing = new ArrayList<>(publish(publishers, plan.subList(0, tailFrom)));
            for (int k = 1; k <= kills(); k++) {
                long share = distinct * k / (kills() + 1);
                await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> processed() >= share);
                progress.killedAt(System.nanoTime());
                cluster.kill9(leader);
                long processedAtKill = (long) processed();
                lastKilled = leader;
                killed.add(cluster.node(leader) + " (leader; " + consumersOnIt.size() + " of the 2 consuming"
                        + " connections on it) at " + processedAtKill + " of " + distinct + " processed");
                assertThat(processedAtKill).as("killed mid-stream (the plan's tail is still to come)")
                        .isLessThan(distinct);
                if (k == 1) {
                    assertThat(consumersOnIt).as("a consuming connection was on the killed node, so it had to move")
                            .isNotEmpty();
                }
                if (k < kills()) {
                    cluster.restart(leader); // back before the next kill, so that a quorum survives it
                    leader = cluster.leaderOf(queue, leader);
                    consumersOnIt = onNode(leader);
                }
            }
            publishing.addAll(publish(publishers, plan.subList(tailFrom, plan.size())));
            long publishRetries = 0;
            for (Future<Long> f : publishing) {
                publishRetries += f.get();
            }
            publishers.shutdown();
            int gone = lastKilled;
            int anyUp = gone % 3 + 1;
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> processed() >= distinct
                    && ready(anyUp, queue) == 0);
            long drained = System.nanoTime();
            progress.stop();

            assertThat(credits.balances(schema)).isEqualTo(expected);
            assertThat(processedRows()).as("inbox rows: each distinct id once").isEqualTo(distinct);
            assertThat(processed()).as("effects run, over both instances").isEqualTo(distinct);
            assertThat(decisions("duplicate")).as("duplicates recognised")
                    .isGreaterThanOrEqualTo(plan.size() - distinct);
            assertThat(decisions("dead-lettered")).isZero();
            assertThat(ready(anyUp, queue + ".dlq")).as("nothing dead-lettered").isZero();
            await("both instances' consuming connections, on surviving nodes").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                            cluster.nodesOfConnections("idemkit-consume", anyUp)).hasSize(2).doesNotContain(gone));

            String report = "| messages | distinct | duplicates in plan | kills | longest pause after a kill | "
                    + "duplicates seen | publish retries | wall time | totals |\n|---|---|---|---|---|---|---|---|---|\n"
                    + "| " + plan.size() + " | " + distinct + " | " + (plan.size() - distinct) + " | " + kills() + " | "
                    + progress.longestAfterKillMillis() + " ms (before the first kill: "
                    + progress.longestBeforeKillMillis() + " ms) | " + (long) decisions("duplicate") + " | "
                    + publishRetries + " | " + String.format("%.1f s", (drained - began) / 1e9) + " | exact |\n\n"
                    + "killed: " + String.join("; ", killed) + "\n";
            System.out.println("rabbit cluster:\n" + report);
            Files.writeString(Path.of("target", "rabbit-cluster" + (kills() > 1 ? "-slow" : "") + ".md"), report,
                    StandardCharsets.UTF_8);
        } finally {
            progress.stop();
            a.close();
            batched.close();
            b.close();
        }
    }

    /** Which of the consuming connections are on {@code node} (they reconnect in the order of their addresses). */
    private List<Integer> onNode(int node) throws Exception {
        return cluster.nodesOfConnections("idemkit-consume", node).stream().filter(n -> n == node).toList();
    }


    /**
     * Interleaved slices through both instances; a publish that fails (its node died, the connection is recovering)
     * is sent again with the same id until the broker confirms it, as any at-least-once producer does. Returns the
     * number of such retries.
     */
    private List<Future<Long>> publish(ExecutorService pool, List<OutgoingMessage> plan) {
        List<Future<Long>> done = new ArrayList<>();
        for (int t = 0; t < PUBLISHERS; t++) {
            int slice = t;
            Assembly via = t % 2 == 0 ? first : second;
            done.add(pool.submit(() -> {
                long retries = 0;
                for (int i = slice; i < plan.size(); i += PUBLISHERS) {
                    long deadline = System.nanoTime() + PATIENCE.toNanos();
                    while (true) {
                        try {
                            via.transport().publish(queue, plan.get(i));
                            break;
                        } catch (TransportException e) {
                            if (System.nanoTime() > deadline) {
                                throw e;
                            }
                            retries++;
                            Thread.sleep(50);
                        }
                    }
                }
                return retries;
            }));
        }
        return done;
    }

    private double processed() {
        return decisions("processed");
    }

    private double decisions(String decision) {
        return first.metrics().count("idemkit_messages", "decision", decision)
                + second.metrics().count("idemkit_messages", "decision", decision);
    }

    /** Ready messages in {@code name} (which must exist), asked of node {@code node}. */
    private long ready(int node, String name) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(cluster.uri(node));
        try (com.rabbitmq.client.Connection c = f.newConnection("idemkit-it-cluster-counts");
                Channel ch = c.createChannel()) {
            return ch.queueDeclarePassive(name).getMessageCount();
        }
    }

    private long processedRows() throws Exception {
        try (Connection c = TestEnvironment.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM " + schema + ".processed_messages WHERE consumer = 'account-credit'")) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Samples the processed count every millisecond: the longest stretch without a processed message that ended in the
     * 30 s after a kill, and for comparison the longest before the first kill.
     */
    private final class Progress {
        private static final long WINDOW = Duration.ofSeconds(30).toNanos();
        private final List<Long> kills = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final AtomicLong longestAfter = new AtomicLong();
        private final AtomicLong longestBefore = new AtomicLong();
        private volatile boolean running = true;

        Progress() {
            Thread sampler = new Thread(() -> {
                double last = -1;
                long lastChange = System.nanoTime();
                while (running) {
                    double now = processed();
                    long t = System.nanoTime();
                    if (now != last) {
                        long gap = last <= 0 ? 0 : t - lastChange; // from the first processed message on
                        if (kills.isEmpty()) {
                            longestBefore.accumulateAndGet(gap, Math::max);
                        } else if (kills.stream().anyMatch(k -> t >= k && t - k <= WINDOW)) {
                            longestAfter.accumulateAndGet(gap, Math::max);
                        }
                        last = now;
                        lastChange = t;
                    }
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "cluster-progress");
            sampler.setDaemon(true);
            sampler.start();
        }

        void killedAt(long nanos) {
            kills.add(nanos);
        }

        void stop() {
            running = false;
        }

        long longestAfterKillMillis() {
            return longestAfter.get() / 1_000_000;
        }

        long longestBeforeKillMillis() {
            return longestBefore.get() / 1_000_000;
        }
    }
}
