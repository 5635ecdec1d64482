package dev.idemkit.adapters.kafka;

import dev.idemkit.testsupport.Processes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;

/**
 * A real KRaft Kafka cluster of {@code n} nodes on loopback, each a separate JVM ({@link KafkaBroker}) that is both a
 * broker and one of {@code n} static controller voters; topics are created with replication factor {@code n} by
 * default and {@code min.insync.replicas=2}, the internal topics (group offsets, transactions, share-group state)
 * likewise. A test kills a node with SIGKILL ({@link #kill9}) and brings it back on the same ports and data
 * ({@link #restart}); {@link #close()} kills every node and deletes their directories. Nothing of the machine's own
 * services is touched.
 */
public final class KafkaCluster implements AutoCloseable {
    private static final Duration PATIENCE = Duration.ofSeconds(90);

    private final List<KafkaBroker> nodes;
    private final Admin admin;

    private KafkaCluster(List<KafkaBroker> nodes) {
        this.nodes = nodes;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    }

    /** Formats and starts {@code n} nodes (at least 3, so that one may die), returning when every one listens. */
    public static KafkaCluster start(int n) {
        if (n < 3) {
            throw new IllegalArgumentException("a cluster that survives a node's death needs 3 nodes, got " + n);
        }
        List<KafkaBroker.Node> layout = new ArrayList<>();
        for (int id = 1; id <= n; id++) {
            layout.add(new KafkaBroker.Node(id, Processes.freePort(), Processes.freePort(), null, n));
        }
        String voters = layout.stream().map(x -> x.id() + "@127.0.0.1:" + x.controllerPort())
                .collect(Collectors.joining(","));
        String clusterId = Uuid.randomUuid().toString();
        List<KafkaBroker> nodes = new ArrayList<>();
        try {
            for (KafkaBroker.Node x : layout) {
                nodes.add(KafkaBroker.create(new KafkaBroker.Node(x.id(), x.port(), x.controllerPort(), voters, n),
                        clusterId));
            }
            // a node's listener opens once a majority of the controllers is up: launch all, then wait for each
            nodes.forEach(KafkaBroker::launch);
            nodes.forEach(KafkaBroker::awaitListening);
        } catch (RuntimeException e) {
            nodes.forEach(KafkaBroker::close);
            throw e;
        }
        KafkaCluster cluster = new KafkaCluster(List.copyOf(nodes));
        cluster.awaitBrokers(n);
        return cluster;
    }

    /** Every node's address, as a client's {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return nodes.stream().map(KafkaBroker::bootstrapServers).collect(Collectors.joining(","));
    }

    /** The node with id {@code id} (1 to n). */
    public KafkaBroker node(int id) {
        return nodes.get(id - 1);
    }

    public int size() {
        return nodes.size();
    }

    /** SIGKILL of node {@code id}: no clean shutdown, as a crash. */
    public void kill9(int id) {
        node(id).kill();
    }

    /**
     * Starts node {@code id} again on its ports and data and waits until it is back in the in-sync replicas of every
     * partition (internal topics included): after that the cluster survives the death of another node.
     */
    public void restart(int id) {
        node(id).start();
        awaitInSync();
    }

    /** Starts every node that is not running (a test's kill left behind) and waits until all are in sync. */
    public void restartDead() {
        boolean any = false;
        for (KafkaBroker n : nodes) {
            if (!n.alive()) {
                n.start();
                any = true;
            }
        }
        if (any) {
            awaitBrokers(nodes.size());
            awaitInSync();
        }
    }

    /** The node id of the current leader of {@code topic}'s {@code partition}, waiting for one to be elected. */
    public int leaderOf(String topic, int partition) {
        return leaderOtherThan(topic, partition, -1);
    }

    /**
     * The node id of the leader of {@code topic}'s {@code partition} once it is not node {@code dead} (killed: it stays
     * the leader in the metadata until the controller fences it, {@code broker.session.timeout.ms} later).
     */
    public int leaderOtherThan(String topic, int partition, int dead) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            TopicPartitionInfo p = describe(List.of(topic)).get(topic).partitions().get(partition);
            Node leader = p.leader();
            if (leader != null && !leader.isEmpty() && leader.id() != dead) {
                return leader.id();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(topic + "-" + partition + " has had no leader but " + dead + " for "
                        + PATIENCE);
            }
            pause(100);
        }
    }

    /** Waits until every partition of every topic, internal ones included, has all live nodes in sync. */
    public void awaitInSync() {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            List<String> behind = new ArrayList<>();
            try {
                var names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names()
                        .get(30, TimeUnit.SECONDS);
                int live = (int) nodes.stream().filter(KafkaBroker::alive).count();
                describe(List.copyOf(names)).values().forEach(d -> d.partitions().stream()
                        .filter(p -> p.isr().size() < Math.min(live, p.replicas().size()))
                        .forEach(p -> behind.add(d.name() + "-" + p.partition() + " isr " + p.isr())));
            } catch (Exception e) {
                behind.add(e.toString());
            }
            if (behind.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("replicas not in sync after " + PATIENCE + ": " + behind);
            }
            pause(200);
        }
    }

    private void awaitBrokers(int n) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            try {
                if (admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).size() == n) {
                    return;
                }
            } catch (Exception e) {
                // not yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the cluster did not register its " + n + " brokers in " + PATIENCE);
            }
            pause(200);
        }
    }

    private Map<String, TopicDescription> describe(List<String> topics) {
        try {
            return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("could not describe " + topics + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
        nodes.forEach(KafkaBroker::close);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
