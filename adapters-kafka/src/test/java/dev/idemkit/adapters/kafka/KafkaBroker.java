package dev.idemkit.adapters.kafka;

import dev.idemkit.testsupport.Processes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;

/**
 * A real KRaft Kafka node (kafka_2.13, the version the build pins; broker and controller in one process) run as a
 * separate JVM from the classpath that module {@code kafka-test-broker} resolves, on free loopback ports with a fresh
 * log directory: a single-node cluster of its own ({@link #create()}, {@link #shared()}), or one of the nodes of a
 * {@link KafkaCluster}. {@link #shared()} starts one per test JVM and stops it when the JVM exits; {@link #kill()} and
 * {@link #start()} let a test take it down hard (SIGKILL) and bring it back on the same ports and data. Nothing of the
 * machine's own services is touched.
 */
public final class KafkaBroker implements AutoCloseable {
    /** Where the broker's classpath file is: set by the build, or found from the working directory. */
    public static final String CLASSPATH_PROPERTY = "idemkit.kafka.brokerClasspath";
    private static KafkaBroker shared;

    private final Path dir;
    private final Node node;
    private final String classpath;
    private Process process;

    /**
     * Where a node listens and whom it votes with.
     *
     * @param id the node id ({@code node.id})
     * @param voters the static controller quorum ({@code id@host:port,...}); {@code null} for a single node that
     *     forms its own quorum ({@code --standalone})
     * @param replication the replication factor of the internal topics and the default of new topics; above 1,
     *     {@code min.insync.replicas} is 2
     */
    record Node(int id, int port, int controllerPort, String voters, int replication) {}

    private KafkaBroker(Path dir, Node node, String classpath) {
        this.dir = dir;
        this.node = node;
        this.classpath = classpath;
    }

    /** The broker of this test JVM, started on first use. */
    public static synchronized KafkaBroker shared() {
        if (shared == null) {
            KafkaBroker b = create();
            b.start();
            Runtime.getRuntime().addShutdownHook(new Thread(b::close, "kafka-broker-stop"));
            shared = b;
        }
        return shared;
    }

    /** A new broker of its own (formatted, not started). */
    public static KafkaBroker create() {
        return create(new Node(1, Processes.freePort(), Processes.freePort(), null, 1), Uuid.randomUuid().toString());
    }

    /** A node of a cluster {@code clusterId} (formatted, not started). */
    static KafkaBroker create(Node node, String clusterId) {
        try {
            Path dir = Files.createTempDirectory("idemkit-kafka-" + node.id() + "-");
            KafkaBroker b = new KafkaBroker(dir, node, readClasspath());
            b.format(clusterId);
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + node.port();
    }

    /** This node's id ({@code node.id}), as metadata names it. */
    public int id() {
        return node.id();
    }

    /** Whether the process is running (it may still be starting). */
    public synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    public KafkaSettings settings() {
        return KafkaSettings.defaults(bootstrapServers());
    }

    /** A topic name no other test uses. */
    public static String uniqueTopic(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 12);
    }

    private static String readClasspath() throws IOException {
        List<Path> candidates = new ArrayList<>();
        String configured = System.getProperty(CLASSPATH_PROPERTY);
        if (configured != null) {
            candidates.add(Paths.get(configured));
        }
        Path here = Paths.get("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            candidates.add(p.resolve("kafka-test-broker/target/broker.classpath"));
        }
        for (Path c : candidates) {
            if (Files.isRegularFile(c)) {
                String cp = Files.readString(c).trim();
                if (!cp.isEmpty()) {
                    return cp;
                }
            }
        }
        throw new IllegalStateException("no Kafka broker classpath at " + candidates.get(0)
                + ": build module kafka-test-broker first (./mvnw install -DskipTests)");
    }

    private void format(String clusterId) throws IOException {
        Path logs = dir.resolve("logs");
        Files.createDirectories(logs);
        int r = node.replication();
        int minIsr = Math.min(2, r);
        String props = String.join("\n",
                "process.roles=broker,controller",
                "node.id=" + node.id(),
                node.voters() == null ? "controller.quorum.bootstrap.servers=127.0.0.1:" + node.controllerPort()
                        : "controller.quorum.voters=" + node.voters(),
                "listeners=PLAINTEXT://127.0.0.1:" + node.port() + ",CONTROLLER://127.0.0.1:" + node.controllerPort(),
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + node.port(),
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + logs,
                "num.partitions=1",
                "auto.create.topics.enable=false",
                "delete.topic.enable=true",
                "default.replication.factor=" + r,
                "min.insync.replicas=" + minIsr,
                "offsets.topic.replication.factor=" + r,
                "offsets.topic.num.partitions=5",
                "transaction.state.log.replication.factor=" + r,
                "transaction.state.log.min.isr=" + minIsr,
                "transaction.state.log.num.partitions=5",
                "share.coordinator.state.topic.replication.factor=" + r,
                "share.coordinator.state.topic.min.isr=" + minIsr,
                // a node killed in a cluster is fenced, and its partitions led elsewhere, after this session (9 s by
                // default); the controller hears from each node every half second
                "broker.session.timeout.ms=4000",
                "broker.heartbeat.interval.ms=500",
                // a floor only (the default lock stays 30 s): a test may give its share group a lock of a second or two
                "group.share.min.record.lock.duration.ms=1000",
                // a share consumer gets its assignment on a heartbeat: 5 s by default, most of a short test's time
                "group.share.min.heartbeat.interval.ms=500",
                "group.share.heartbeat.interval.ms=500",
                "group.share.min.session.timeout.ms=6000",
                "group.share.session.timeout.ms=6000",
                "group.initial.rebalance.delay.ms=0",
                "group.consumer.min.session.timeout.ms=2000",
                "group.min.session.timeout.ms=2000",
                "");
        Files.writeString(dir.resolve("server.properties"), props);
        List<String> format = new ArrayList<>(List.of(java(), "-cp", classpath, "kafka.tools.StorageTool", "format",
                "-t", clusterId, "-c", dir.resolve("server.properties").toString()));
        if (node.voters() == null) {
            format.add("--standalone");
        }
        run(format, "format");
    }

    /** Starts the broker and waits until it accepts connections. */
    public void start() {
        launch();
        awaitListening();
    }

    /**
     * Starts the process without waiting: a cluster's nodes open their listeners only once a majority of the
     * controllers is up, so each is launched before any is awaited.
     */
    synchronized void launch() {
        if (process != null && process.isAlive()) {
            return;
        }
        try {
            process = new ProcessBuilder(java(), "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC",
                    "-Dlog4j2.configurationFile=" + log4j(), "-cp", classpath, "kafka.Kafka",
                    dir.resolve("server.properties").toString())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("broker.log").toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits (90 s at most) until the launched broker accepts connections. */
    void awaitListening() {
        Process process;
        synchronized (this) {
            process = this.process;
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        int port = node.port();
        while (!Processes.accepts(port)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the Kafka broker exited at start; see " + dir.resolve("broker.log"));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the Kafka broker did not open port " + port + " in 90 s; see "
                        + dir.resolve("broker.log"));
            }
            pause(100);
        }
    }

    /** SIGKILL: no clean shutdown, as a crash. */
    public synchronized void kill() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public synchronized void close() {
        kill();
        Processes.deleteTree(dir);
    }

    private Path log4j() throws IOException {
        Path f = dir.resolve("log4j2.properties");
        if (!Files.exists(f)) {
            Files.writeString(f, String.join("\n", "rootLogger.level=WARN", "rootLogger.appenderRef.out.ref=out",
                    "appender.out.type=Console", "appender.out.name=out", "appender.out.layout.type=PatternLayout",
                    "appender.out.layout.pattern=%d %p %c{1} %m%n", ""));
        }
        return f;
    }

    private void run(List<String> command, String what) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve(what + ".log").toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("kafka " + what + " failed: "
                        + Files.readString(dir.resolve(what + ".log")));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
