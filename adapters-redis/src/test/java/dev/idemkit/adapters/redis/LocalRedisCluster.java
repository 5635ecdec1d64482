package dev.idemkit.adapters.redis;

import dev.idemkit.testsupport.Processes;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;

/**
 * A real three-master Redis Cluster for one test class: three {@code redis-server} processes with cluster mode on
 * (no persistence, files under a temporary directory) on free ports of 127.0.0.1, joined by
 * {@code redis-cli --cluster create}. Stopped and deleted at close. Without {@code redis-server} on the PATH the
 * test class is skipped (an assumption, with the reason), since there is nothing to test against.
 */
final class LocalRedisCluster implements AutoCloseable {
    private final List<Process> servers = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final Path dir;

    private LocalRedisCluster() throws IOException {
        this.dir = Files.createTempDirectory("idemkit-redis-cluster");
    }

    static LocalRedisCluster start() throws Exception {
        Assumptions.assumeTrue(Processes.onPath("redis-server") && Processes.onPath("redis-cli"),
                "redis-server and redis-cli are needed on the PATH to start a local Redis Cluster");
        LocalRedisCluster cluster = new LocalRedisCluster();
        try {
            for (int i = 0; i < 3; i++) {
                int port = freePortWithFreeBus();
                cluster.ports.add(port);
                cluster.servers.add(new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind",
                        "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + port + ".conf",
                        "--dir", cluster.dir.toString(), "--save", "", "--appendonly", "no", "--protected-mode", "no")
                        .redirectErrorStream(true).redirectOutput(cluster.dir.resolve("server-" + port + ".log").toFile())
                        .start());
            }
            for (int port : cluster.ports) {
                cluster.awaitReply(List.of("-p", String.valueOf(port), "ping"), "PONG");
            }
            List<String> create = new ArrayList<>(List.of("--cluster", "create"));
            cluster.ports.forEach(p -> create.add("127.0.0.1:" + p));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            String out = cli(create);
            if (!out.contains("All 16384 slots covered")) {
                throw new IllegalStateException("redis-cli --cluster create did not cover the slots:\n" + out);
            }
            for (int port : cluster.ports) {
                cluster.awaitReply(List.of("-p", String.valueOf(port), "cluster", "info"), "cluster_state:ok");
            }
            return cluster;
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
    }

    /** A started cluster with a client on it (unique key prefix); closing it deletes the keys and stops the cluster. */
    record WithClient(LocalRedisCluster cluster, RedisTestServer redis) implements AutoCloseable {
        static WithClient start(String name) throws Exception {
            LocalRedisCluster cluster = LocalRedisCluster.start();
            try {
                return new WithClient(cluster, RedisTestServer.start(name, cluster.settings(name)));
            } catch (RuntimeException e) {
                cluster.close();
                throw e;
            }
        }

        /** Null-safe: for an {@code @AfterAll} whose {@code @BeforeAll} may have been skipped or failed. */
        static void close(WithClient session) {
            if (session != null) {
                session.close();
            }
        }

        @Override
        public void close() {
            try {
                redis.close();
            } finally {
                cluster.close();
            }
        }
    }

    /** Settings for this cluster: every node as a seed, cluster topology, a unique key prefix. */
    RedisSettings settings(String name) {
        String urls = ports.stream().map(p -> "redis://127.0.0.1:" + p).collect(Collectors.joining(","));
        return RedisSettings.fromEnvironment(Map.of("IDEMKIT_REDIS_URL", urls, "IDEMKIT_REDIS_TOPOLOGY", "cluster"))
                .withKeyPrefix("it-" + name + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt()));
    }

    /** The port of the master that serves {@code key}'s slot. */
    int portOf(String key) throws Exception {
        String slots = cli(List.of("-p", String.valueOf(ports.get(0)), "cluster", "slots"));
        int slot = KeyLayout.slot(key);
        String[] lines = slots.split("\n");
        for (int i = 0; i + 3 < lines.length; i++) {
            if (lines[i].matches("\\d+") && lines[i + 1].matches("\\d+") && Integer.parseInt(lines[i]) <= slot
                    && slot <= Integer.parseInt(lines[i + 1])) {
                return Integer.parseInt(lines[i + 3].strip());
            }
        }
        throw new IllegalStateException("no node serves slot " + slot + ":\n" + slots);
    }

    private void awaitReply(List<String> args, String expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        String last = "";
        while (System.nanoTime() < deadline) {
            last = cli(args);
            if (last.contains(expected)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("redis-cli " + String.join(" ", args) + " never answered " + expected
                + "; last answer: " + last);
    }

    private static String cli(List<String> args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add("redis-cli");
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(15, TimeUnit.SECONDS);
        return out;
    }


    /**
     * A port whose cluster bus port (+10000) is free too, both below the ephemeral range (32768+): a port found free
     * there can be taken by any process's outgoing connection before redis-server binds it (seen once: a node never
     * answered PING).
     */
    private static int freePortWithFreeBus() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = 10_000 + ThreadLocalRandom.current().nextInt(12_000);
            try (ServerSocket a = new ServerSocket(port); ServerSocket b = new ServerSocket(port + 10_000)) {
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port pair (p, p + 10000) found for a cluster node");
    }

    @Override
    public void close() {
        for (Process p : servers) {
            p.destroy();
        }
        for (Process p : servers) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
        Processes.deleteTree(dir);
    }
}
