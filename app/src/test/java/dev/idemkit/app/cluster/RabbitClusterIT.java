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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
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

    RabbitCluster cluster;

    private String schema;
    private String queue;
    private String run;
    private Assembly first;
    private Assembly second;
    private ClusterStream stream;

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
        stream = new ClusterStream(first, second, queue, schema);
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
        int gone = stream.acrossKills(credits, kills(), new ClusterStream.Nodes() {
            private List<Integer> consumersOnIt = List.of();
            private int down; // the node killed and not restarted, 0 for none

            private int anyUp() {
                return down % 3 + 1;
            }

            @Override
            public int leader() throws Exception {
                // where the queue's leader and the consumers are, asked before a kill is due (rabbitmqctl takes a second)
                int leader = cluster.leaderOf(queue, 1);
                consumersOnIt = onNode(leader);
                return leader;
            }

            @Override
            public String kill(int node, int k, long processedAtKill) throws Exception {
                cluster.kill9(node);
                down = node;
                if (k == 1) {
                    assertThat(consumersOnIt).as("a consuming connection was on the killed node, so it had to move")
                            .isNotEmpty();
                }
                return cluster.node(node) + " (leader; " + consumersOnIt.size() + " of the 2 consuming connections on"
                        + " it)";
            }

            @Override
            public void restart(int node) throws Exception {
                cluster.restart(node);
                down = 0;
            }

            @Override
            public long pending() throws Exception {
                return ready(anyUp(), queue);
            }

            @Override
            public long deadLettered() throws Exception {
                return ready(anyUp(), queue + ".dlq");
            }
        }, "rabbit-cluster" + (kills() > 1 ? "-slow" : ""));
        int anyUp = gone % 3 + 1;
        await("both instances' consuming connections, on surviving nodes").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                        cluster.nodesOfConnections("idemkit-consume", anyUp)).hasSize(2).doesNotContain(gone));
    }

    /** Which of the consuming connections are on {@code node} (they reconnect in the order of their addresses). */
    private List<Integer> onNode(int node) throws Exception {
        return cluster.nodesOfConnections("idemkit-consume", node).stream().filter(n -> n == node).toList();
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
}
