package dev.idemkit.app.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.kafka.KafkaCluster;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.app.CreditPlan;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.crash.KafkaCounts;
import dev.idemkit.app.wiring.Assembly;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.TestInstance;

/**
 * A real three-node KRaft Kafka cluster ({@link KafkaCluster}: three broker JVMs, each also a controller voter,
 * replication factor 3, {@code min.insync.replicas=2}), two {@code serve}-like instances on one PostgreSQL schema (one
 * consuming a record per transaction, one batched) consuming the work topic as one consumer group, or as one share
 * group, while credits with 30 % duplicate ids are published through both with idemkit's idempotent producer
 * ({@code acks=all}): when a share of the distinct credits is in, the node that leads the work topic's partition 0 gets
 * kill -9 (its partitions elect new leaders among the in-sync replicas; the group's coordinator may move with it).
 * Every account ends with exactly the sum over distinct ids, every distinct id is processed once, nothing is
 * dead-lettered, nothing is left unsettled; how long consumption paused is measured and written to
 * {@code target/kafka-cluster-<consumption>.md}.
 *
 * <p>10,000 credits and two kills per consumption (the killed node restarted and back in sync in between), in the full
 * tier: {@code ./mvnw -B -pl app verify -Didemkit.excludedGroups= -Dgroups=slow -Dit.test=KafkaClusterSlowIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false} ({@code -Didemkit.cluster.messages=2000 -Didemkit.cluster.kills=1}: a short
 * run). The three broker JVMs beside the README tier's other tests cost it 2-3 minutes, over its budget, so there is no
 * short variant in {@code verify}; the RabbitMQ cluster's ({@code RabbitClusterIT}) is.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // one cluster for the class
@org.junit.jupiter.api.Tag("slow") // the full tier: three broker JVMs beside the suite cost 2-3 min
class KafkaClusterSlowIT {
    private static final double DUPLICATES = 0.30;
    private static final int ACCOUNTS = 5;

    KafkaCluster cluster;
    private Admin admin;

    @BeforeAll
    void startCluster() {
        cluster = KafkaCluster.start(3);
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()));
    }

    @AfterAll
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void everyNodeUp() {
        cluster.restartDead(); // the last kill of a test leaves its node dead
    }

    /** {@code -Didemkit.cluster.messages=2000} for a short run. */
    int messages() {
        return Integer.getInteger("idemkit.cluster.messages", 10_000);
    }

    /** Kills, each of the node that leads the work topic's partition 0 then, at evenly spaced shares of the credits. */
    int kills() {
        return Integer.getInteger("idemkit.cluster.kills", 2);
    }

    @ParameterizedTest
    @EnumSource(KafkaSettings.Consumption.class)
    void killingTheLeaderOfAWorkPartitionMidStreamLosesNothingAndRunsNoEffectTwice(
            KafkaSettings.Consumption consumption) throws Exception {
        String schema = TestEnvironment.unique("app_it_kcluster");
        String run = UUID.randomUUID().toString().substring(0, 8);
        String topic = AccountCredit.QUEUE + ".kcluster-" + run;
        Assembly first = Assembly.start(settings(schema, consumption));
        Assembly second = null;
        try {
            second = Assembly.start(settings(schema, consumption));
            stream(consumption, topic, run, schema, first, second);
        } finally {
            first.close();
            if (second != null) {
                second.close();
            }
            TestEnvironment.dropSchema(schema);
        }
    }

    private void stream(KafkaSettings.Consumption consumption, String topic, String run, String schema, Assembly first,
            Assembly second) throws Exception {
        ClusterStream stream = new ClusterStream(first, second, topic, schema);
        CreditPlan credits = CreditPlan.of(new SplittableRandom(run.hashCode()), messages(), DUPLICATES, ACCOUNTS,
                "kcluster-" + run);
        ((KafkaMessageTransport) first.transport()).declare(topic); // the topics, before the stream
        TopicDescription work = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(topic);
        assertThat(work.partitions()).as("idemkit's topics take the cluster's replication (3), not 1")
                .allSatisfy(p -> assertThat(p.replicas()).hasSize(3));
        try (KafkaCounts counts = new KafkaCounts(((KafkaMessageTransport) first.transport()).settings())) {
            stream.acrossKills(credits, kills(), new ClusterStream.Nodes() {
                @Override
                public int leader() {
                    return cluster.leaderOf(topic, 0);
                }

                @Override
                public String kill(int node, int k, long processedAtKill) {
                    cluster.kill9(node);
                    long killed = System.nanoTime();
                    // the controller fences the dead node after its session (4 s here) and elects a new leader
                    int next = cluster.leaderOtherThan(topic, 0, node);
                    return "node " + node + " (leader of " + topic + "-0; node " + next + " led it "
                            + (System.nanoTime() - killed) / 1_000_000 + " ms later)";
                }

                @Override
                public void restart(int node) {
                    cluster.restart(node);
                }

                @Override
                public long pending() throws Exception {
                    return counts.pending(topic);
                }

                @Override
                public long deadLettered() {
                    return first.deadLetterQueue().depth(topic);
                }
            }, "kafka-cluster-" + consumption.name().toLowerCase(Locale.ROOT));
        }
    }

    private AppSettings settings(String schema, KafkaSettings.Consumption consumption) {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_CONCURRENCY", "4",
                "IDEMKIT_TRANSPORT", "kafka",
                "IDEMKIT_KAFKA_BOOTSTRAP_SERVERS", cluster.bootstrapServers(),
                "IDEMKIT_KAFKA_CONSUMPTION", consumption.name().toLowerCase(Locale.ROOT));
        return AppSettings.resolve(Sources.of(Map.of(), env));
    }
}
