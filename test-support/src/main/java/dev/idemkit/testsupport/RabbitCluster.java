package dev.idemkit.testsupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real RabbitMQ cluster of {@code n} nodes on this machine, from the Debian package's own scripts, beside the
 * machine's broker and never touching it (the recipe: docs/rabbit-cluster.md): every node has its own name
 * ({@code idk<run>n<i>@localhost}), free loopback ports, data and log dirs under one temporary directory, a cookie
 * there ({@code HOME} points at it), and config files of its own that hide {@code /etc/rabbitmq}. Nodes 2..n join node
 * 1. {@link #kill9} kills a node's Erlang VM (its pid file names it; the process started is only a shell wrapper),
 * {@link #restart} starts it again (it rejoins by itself), {@link #close} kills every node and deletes the directory
 * (also on JVM exit). Starting three nodes takes 12-14 s on 2 cores.
 */
public final class RabbitCluster implements AutoCloseable {
    private static final Path BIN = Path.of("/usr/lib/rabbitmq/bin");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path base;
    private final String run = UUID.randomUUID().toString().substring(0, 6);
    private final int[] amqpPorts;
    private final int[] distPorts;
    private final Thread cleanup = new Thread(this::destroy, "rabbit-cluster-cleanup");

    /** Whether this machine has the broker's scripts (the Debian package). */
    public static boolean available() {
        return Files.isExecutable(BIN.resolve("rabbitmq-server")) && Files.isExecutable(BIN.resolve("rabbitmqctl"));
    }

    /** Starts {@code nodes} nodes and clusters them; returns once all are online. */
    public static RabbitCluster start(int nodes) throws Exception {
        RabbitCluster cluster = new RabbitCluster(nodes);
        try {
            cluster.boot();
            return cluster;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    private RabbitCluster(int nodes) throws IOException {
        this.base = Files.createTempDirectory("idemkit-rabbit-cluster-");
        this.amqpPorts = new int[nodes];
        this.distPorts = new int[nodes];
        // below the ephemeral range (32768+), where the CLI tools' own distribution ports (35672-35682) and every
        // client socket live: a port taken from there collided with them once (a node never came up)
        for (int block = 0; ; block++) {
            if (block == 50) {
                throw new IOException("no free block of ports in 5681..6180 / 25681..26180");
            }
            boolean free = true;
            for (int i = 0; i < nodes; i++) {
                amqpPorts[i] = 5681 + 10 * block + i;
                distPorts[i] = 25681 + 10 * block + i;
                free &= free(amqpPorts[i]) && free(distPorts[i]);
            }
            if (free) {
                break;
            }
        }
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    private void boot() throws Exception {
        Files.writeString(base.resolve("rabbitmq-env.conf"), "");
        Path cookie = base.resolve(".erlang.cookie");
        Files.writeString(cookie, "idemkit-it-" + UUID.randomUUID());
        Files.setPosixFilePermissions(cookie, PosixFilePermissions.fromString("r--------"));
        for (int i = 1; i <= size(); i++) {
            Path dir = dir(i);
            Files.createDirectories(dir.resolve("log"));
            Files.createDirectories(dir.resolve("mnesia"));
            Files.writeString(dir.resolve("enabled_plugins"), "[].\n");
            Files.writeString(dir.resolve("rabbitmq.conf"), "log.console = false\nlog.file.level = info\n");
            launch(i);
        }
        for (int i = 1; i <= size(); i++) {
            awaitBoot(i);
        }
        for (int i = 2; i <= size(); i++) {
            ctl(i, "stop_app");
            ctl(i, "join_cluster", node(1));
            ctl(i, "start_app");
        }
        ctl(1, "await_online_nodes", Integer.toString(size()));
    }

    public int size() {
        return amqpPorts.length;
    }

    /** Node {@code i}'s Erlang name, e.g. {@code idk3f2a9cn1@localhost}. */
    public String node(int i) {
        return "idk" + run + "n" + i + "@localhost";
    }

    /** Node {@code i}'s AMQP address, {@code 127.0.0.1:port}. */
    public String address(int i) {
        return "127.0.0.1:" + amqpPorts[i - 1];
    }

    /** Every node's address, starting with node {@code first} and going round. */
    public List<String> addressesFrom(int first) {
        List<String> out = new ArrayList<>();
        for (int k = 0; k < size(); k++) {
            out.add(address((first - 1 + k) % size() + 1));
        }
        return out;
    }

    /** The uri of node {@code i} (guest may connect over loopback). */
    public String uri(int i) {
        return "amqp://guest:guest@" + address(i) + "/%2F";
    }

    /**
     * The node number that leads quorum queue {@code queue} (or holds classic queue {@code queue}), asked of node
     * {@code askWhich}.
     */
    public int leaderOf(String queue, int askWhich) throws Exception {
        JsonNode queues = JSON.readTree(ctl(askWhich, "--formatter", "json", "list_queues", "name", "leader"));
        for (JsonNode q : queues) {
            if (q.get("name").asText().equals(queue)) {
                String leader = q.path("leader").asText("");
                if (leader.isBlank() || leader.equals("null")) { // a classic queue: the node that hosts it
                    for (int i = 1; i <= size(); i++) {
                        if (ctl(i, "list_queues", "--local", "name").lines().anyMatch(queue::equals)) {
                            return i;
                        }
                    }
                }
                for (int i = 1; i <= size(); i++) {
                    if (node(i).equals(leader)) {
                        return i;
                    }
                }
                throw new IllegalStateException(queue + " is led by " + leader + ", not a node of this cluster");
            }
        }
        throw new IllegalStateException("no queue " + queue + " on " + node(askWhich));
    }

    /** The nodes (numbers) that hold a connection whose client-provided name starts with {@code prefix}. */
    public List<Integer> nodesOfConnections(String prefix, int askWhich) throws Exception {
        JsonNode connections = JSON.readTree(ctl(askWhich, "--formatter", "json", "list_connections", "port",
                "client_properties"));
        List<Integer> out = new ArrayList<>();
        for (JsonNode c : connections) {
            if (c.get("client_properties").toString().contains("\"" + prefix)) {
                int port = c.get("port").asInt(); // the node's own AMQP port the connection came in on
                for (int i = 1; i <= size(); i++) {
                    if (amqpPorts[i - 1] == port) {
                        out.add(i);
                    }
                }
            }
        }
        return out;
    }

    /** SIGKILL of node {@code i}'s Erlang VM; returns once it is gone. */
    public void kill9(int i) throws Exception {
        long pid = Long.parseLong(Files.readString(dir(i).resolve("beam.pid")).trim());
        ProcessHandle beam = ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException(node(i) + " is not running"));
        beam.destroyForcibly();
        beam.onExit().get(30, TimeUnit.SECONDS);
    }

    /** Starts node {@code i} again; it rejoins the cluster by itself. */
    public void restart(int i) throws Exception {
        launch(i);
        awaitBoot(i);
        if (size() > 1) {
            ctl(1 == i ? 2 : 1, "await_online_nodes", Integer.toString(size()));
        }
    }

    /**
     * A memory alarm on node {@code i} ({@code set_vm_memory_high_watermark 0}: the node blocks every connection that
     * publishes), once the node reports it (at most 10 s).
     */
    public void setMemoryAlarm(int i) throws IOException, InterruptedException {
        ctl(i, "set_vm_memory_high_watermark", "0");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!ctl(i, "eval", "rabbit_alarm:get_alarms().").contains("memory")) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("node " + i + " reports no memory alarm 10 s after the watermark 0");
            }
            Thread.sleep(100);
        }
    }

    /** Ends the memory alarm of node {@code i} (the watermark back to its default, 0.4). */
    public void clearMemoryAlarm(int i) throws IOException, InterruptedException {
        ctl(i, "set_vm_memory_high_watermark", "0.4");
    }

    /** Runs rabbitmqctl against node {@code i}; its standard output, or an exception with everything it said. */
    public String ctl(int i, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(BIN.resolve("rabbitmqctl").toString(), "-q", "-n", node(i)));
        command.addAll(List.of(args));
        return Processes.run(environment(i), command);
    }

    private void launch(int i) throws IOException {
        Files.deleteIfExists(dir(i).resolve("beam.pid")); // a stale one would fool `rabbitmqctl wait`
        ProcessBuilder pb = new ProcessBuilder(BIN.resolve("rabbitmq-server").toString()).directory(base.toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir(i).resolve("stdout.log")
                        .toFile()));
        pb.environment().putAll(environment(i));
        pb.start();
    }

    private void awaitBoot(int i) throws Exception {
        Path pidFile = dir(i).resolve("beam.pid");
        dev.idemkit.ports.contract.Eventually.await(java.time.Duration.ofSeconds(90), node(i) + " writing its pid file"
                + " (its output so far is in " + dir(i).resolve("stdout.log") + ")",
                () -> Files.exists(pidFile) && pidFile.toFile().length() > 0);
        try {
            ctl(i, "wait", "--timeout", "90", pidFile.toString());
        } catch (IOException e) {
            throw new IOException(e.getMessage() + "\n" + node(i) + "'s output: " + log(i) + "\nits log: " + nodeLog(i), e);
        }
    }

    private String nodeLog(int i) {
        try (Stream<Path> files = Files.list(dir(i).resolve("log"))) {
            StringBuilder out = new StringBuilder();
            for (Path f : files.toList()) {
                String text = Files.readString(f);
                out.append("\n== ").append(f.getFileName()).append('\n')
                        .append(text.length() > 4000 ? text.substring(text.length() - 4000) : text);
            }
            return out.toString();
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private String log(int i) {
        try {
            return Files.readString(dir(i).resolve("stdout.log"));
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private Map<String, String> environment(int i) {
        Path dir = dir(i);
        Map<String, String> env = new HashMap<>();
        env.put("HOME", base.toString()); // the cookie, for servers and CLI alike
        env.put("RABBITMQ_CONF_ENV_FILE", base.resolve("rabbitmq-env.conf").toString());
        env.put("RABBITMQ_NODENAME", node(i));
        env.put("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1");
        env.put("RABBITMQ_NODE_PORT", Integer.toString(amqpPorts[i - 1]));
        env.put("RABBITMQ_DIST_PORT", Integer.toString(distPorts[i - 1]));
        env.put("RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString());
        env.put("RABBITMQ_LOG_BASE", dir.resolve("log").toString());
        env.put("RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq.conf").toString());
        env.put("RABBITMQ_ADVANCED_CONFIG_FILE", dir.resolve("advanced.config").toString());
        env.put("RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString());
        env.put("RABBITMQ_PID_FILE", dir.resolve("beam.pid").toString());
        env.put("ERL_EPMD_ADDRESS", "127.0.0.1");
        // no scheduler busy-waiting: three extra nodes spinning for work on a 2-core machine took CPU from the tests
        env.put("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}"
                + " +sbwt none +sbwtdcpu none +sbwtdio none");
        return env;
    }

    private Path dir(int i) {
        return base.resolve("n" + i);
    }

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort() == port;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        destroy();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run
        }
    }

    private void destroy() {
        List<ProcessHandle> killed = new ArrayList<>();
        for (int i = 1; i <= size(); i++) {
            try {
                Path pid = dir(i).resolve("beam.pid");
                if (Files.exists(pid)) {
                    ProcessHandle.of(Long.parseLong(Files.readString(pid).trim())).ifPresent(h -> {
                        h.destroyForcibly();
                        killed.add(h);
                    });
                }
            } catch (IOException | NumberFormatException e) {
                // not started, or already gone
            }
        }
        for (ProcessHandle h : killed) { // their files are theirs until they are gone
            try {
                h.onExit().get(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // deleted below as far as it can be
            }
        }
        Processes.deleteTree(base);
    }
}
