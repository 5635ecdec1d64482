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
 * A real single-node KRaft Kafka broker (kafka_2.13, the version the build pins) run as a separate JVM from the
 * classpath that module {@code kafka-test-broker} resolves, on free loopback ports with a fresh log directory.
 * {@link #shared()} starts one per test JVM and stops it when the JVM exits; {@link #kill()} and {@link #start()}
 * let a test take it down hard (SIGKILL) and bring it back on the same ports and data. Nothing of the machine's own
 * services is touched.
 */
public final class KafkaBroker implements AutoCloseable {
    /** Where the broker's classpath file is: set by the build, or found from the working directory. */
    public static final String CLASSPATH_PROPERTY = "idemkit.kafka.brokerClasspath";
    private static KafkaBroker shared;

    private final Path dir;
    private final int port;
    private final int controllerPort;
    private final String classpath;
    private Process process;

    private KafkaBroker(Path dir, int port, int controllerPort, String classpath) {
        this.dir = dir;
        this.port = port;
        this.controllerPort = controllerPort;
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
        try {
            Path dir = Files.createTempDirectory("idemkit-kafka-");
            KafkaBroker b = new KafkaBroker(dir, Processes.freePort(), Processes.freePort(), readClasspath());
            b.format();
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
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

    private void format() throws IOException {
        Path logs = dir.resolve("logs");
        Files.createDirectories(logs);
        String props = String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.bootstrap.servers=127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + logs,
                "num.partitions=1",
                "auto.create.topics.enable=false",
                "delete.topic.enable=true",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=5",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=5",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
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
        run(List.of(java(), "-cp", classpath, "kafka.tools.StorageTool", "format", "--standalone", "-t",
                Uuid.randomUuid().toString(), "-c", dir.resolve("server.properties").toString()), "format");
    }

    /** Starts the broker and waits until it accepts connections. */
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            return;
        }
        try {
            process = new ProcessBuilder(java(), "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC",
                    "-Dlog4j2.configurationFile=" + log4j(), "-cp", classpath, "kafka.Kafka",
                    dir.resolve("server.properties").toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("broker.log").toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
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
