package dev.idemkit.benchmarks;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.BatchingConsumer;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka, against baselines measured in the same run on the same private broker (a KRaft broker in a JVM of its own,
 * started and removed by this run):
 * <ol>
 *   <li>consume + commit, no effect: idemkit's subscription acking every record vs {@code kafka-consumer-perf-test}
 *       (ConsumerPerformance from kafka-tools, a JVM of its own; its fetch rate, which leaves out its group join);</li>
 *   <li>end to end, as {@code serve} ships it: Kafka -> the batched PostgreSQL inbox + credit -> commit, vs the same
 *       perf-test rate;</li>
 *   <li>the producer idemkit ships ({@code KafkaMessageTransport.producerProperties}: {@code enable.idempotence},
 *       {@code acks=all}) vs the same with idempotence off and {@code acks=1}.</li>
 *   <li>offsets in the database ({@code kafka.offsets=database}): end to end, batched and one record per transaction,
 *       against commit after settle, alternating in rounds ({@code -Dbench.kafka.positions=false} leaves them out);</li>
 *   <li>share groups ({@code kafka.consumption=share}, a second assembly as {@code serve} wires it): idemkit's share
 *       subscription acking every record and the batched inbox end to end, against {@code
 *       kafka-share-consumer-perf-test} (ShareConsumerPerformance, a JVM of its own) and against the consumer-group
 *       rates above, all in the same run ({@code -Dbench.kafka.share=false} leaves them out).</li>
 * </ol>
 * Rates are records per second from the first record handed out to the last one settled (group joins are left out
 * of both sides). A main class, not a test: {@code ./mvnw -q -pl benchmarks exec:java
 * -Dexec.mainClass=dev.idemkit.benchmarks.KafkaBenchmark} (system properties {@code bench.kafka.records},
 * {@code bench.kafka.e2e}).
 */
public final class KafkaBenchmark {
    private static final int RECORDS = Integer.getInteger("bench.kafka.records", 100_000);
    private static final int E2E = Integer.getInteger("bench.kafka.e2e", 20_000);
    private static final String LOCAL_PG = "jdbc:postgresql://127.0.0.1:5432/test";

    private KafkaBenchmark() {}

    public static void main(String[] args) throws Exception {
        long began = System.nanoTime();
        List<String> lines = new ArrayList<>();
        KafkaBroker broker = KafkaBroker.create();
        String schema = Benchmark.newSchema();
        try {
            broker.start();
            Map<String, String> flags = Map.of("store", "postgres", "pg.url", LOCAL_PG, "pg.schema", schema,
                    "transport", "kafka", "kafka.bootstrap-servers", broker.bootstrapServers(), "http.port", "0");
            AppSettings settings = AppSettings.resolve(new Sources(flags, Map.of(), new Properties()));
            try (Assembly assembly = Assembly.start(settings)) {
                MessageTransport kafka = assembly.transport();
                BenchDatabase db = new BenchDatabase(LOCAL_PG, settings.store().postgres().user(),
                        settings.store().postgres().password(), schema);
                db.createAccounts(10_000);

                // 3. producers first: they also fill the topics the consumers read
                double idempotent = produce(broker, "bench-produce-idem", RECORDS, true);
                double plain = produce(broker, "bench-produce-plain", RECORDS, false);

                // 1. consume + commit, no effect
                String perfTopic = "bench-perf";
                String ourTopic = "bench-ours";
                produce(broker, perfTopic, RECORDS, true);
                produce(broker, ourTopic, RECORDS, true);
                double perf = perfTest(broker, perfTopic, RECORDS);
                double ours = consumeAndAck(kafka, ourTopic, RECORDS);

                // 2. end to end, batched as serve runs it, 30 % duplicates
                Workload w = Workload.credits("kafka-e2e", "bench-e2e", "bench-kafka-" + schema, E2E, 0.3, 10_000, 21);
                Workload.publishAll(List.of(w), List.of(kafka), 16);
                BigDecimal before = db.sumOfBalances();
                BatchingConsumer<?> batched = assembly.batchedConsumer("bench-kafka-e2e", ConsumerKind.CREDIT_ACCOUNT,
                        BatchingConsumer.BatchSettings.defaults().withMaxBatch(100).withLinger(Duration.ofMillis(3))
                                .withWorkers(4));
                double e2e;
                try {
                    e2e = drain(kafka, w.queue(), batched, w.size());
                } finally {
                    batched.close();
                }
                boolean exact = db.sumOfBalances().subtract(before).compareTo(w.expectedCredit()) == 0;

                lines.add(String.format(Locale.ROOT, "%-58s %12s %8s", "case", "records/s", "ratio"));
                lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8s", "kafka-consumer-perf-test (fetch rate, baseline)",
                        perf, "1.00"));
                lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8.2f", "idemkit subscription, ack each, commit after settle",
                        ours, ours / perf));
                lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8.2f", "idemkit -> PostgreSQL inbox batched -> commit (30% dup)",
                        e2e, e2e / perf));
                lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8s", "plain producer (acks=1, no idempotence, baseline)",
                        plain, "1.00"));
                lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8.2f", "idempotent producer (acks=all)", idempotent,
                        idempotent / plain));
                lines.add(String.format(Locale.ROOT, "end to end credits exact: %s; %,d records per consume case, %,d"
                        + " end to end", exact, RECORDS, E2E));
                if (Boolean.parseBoolean(System.getProperty("bench.kafka.positions", "true"))) {
                    lines.addAll(positions(flags, db, assembly));
                }
                if (Boolean.parseBoolean(System.getProperty("bench.kafka.share", "true"))) {
                    lines.addAll(share(broker, flags, db, perf, ours, e2e));
                }
                if (Boolean.parseBoolean(System.getProperty("bench.kafka.relay", "true"))) {
                    lines.addAll(relay(broker, assembly.tracing().publishing(kafka))); // as serve wires its relay
                }
                lines.add(String.format(Locale.ROOT, "whole run %.0f s", (System.nanoTime() - began) / 1e9));
            }
        } finally {
            broker.close();
            new BenchDatabase(LOCAL_PG, "postgres", "", schema).dropSchema();
        }
        lines.forEach(System.out::println);
        System.exit(0); // the assembly's and the clients' non-daemon threads
    }

    /**
     * 4b. Offsets in the database ({@code kafka.offsets=database}, a second assembly as {@code serve} wires it) against
     * commit after settle (this run's first assembly), end to end into the PostgreSQL inbox and credit, batched and one
     * record per transaction, alternating in {@code bench.kafka.rounds} rounds (2), each case on a topic of its own.
     */
    private static List<String> positions(Map<String, String> flags, BenchDatabase db, Assembly plain)
            throws Exception {
        Map<String, String> dbFlags = new java.util.HashMap<>(flags);
        dbFlags.put("kafka.offsets", "database");
        AppSettings settings = AppSettings.resolve(new Sources(dbFlags, Map.of(), new Properties()));
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%-58s %12s %8s", "offsets in the database, per round", "records/s",
                "x after"));
        int rounds = Integer.getInteger("bench.kafka.rounds", 2);
        boolean exact = true;
        try (Assembly positions = Assembly.start(settings)) {
            for (int round = 1; round <= rounds; round++) {
                for (boolean batchedMode : List.of(true, false)) {
                    double[] rate = new double[2];
                    for (int which = 0; which < 2; which++) {
                        Assembly a = which == 0 ? plain : positions;
                        String name = "kafka-pos-" + round + "-" + (batchedMode ? "b" : "s") + "-" + which;
                        int n = batchedMode ? E2E : E2E / 4;
                        Workload w = Workload.credits(name, "bench-" + name, "bench-" + name + "-" + db.schema(), n,
                                0.3, 10_000, 23 + round);
                        Workload.publishAll(List.of(w), List.of(a.transport()), 16);
                        BigDecimal before = db.sumOfBalances();
                        if (batchedMode) {
                            BatchingConsumer<?> batched = a.batchedConsumer("bench-" + name, ConsumerKind.CREDIT_ACCOUNT,
                                    BatchingConsumer.BatchSettings.defaults().withMaxBatch(100)
                                            .withLinger(Duration.ofMillis(3)).withWorkers(4));
                            try {
                                rate[which] = drain(a.transport(), w.queue(), batched, w.size());
                            } finally {
                                batched.close();
                            }
                        } else {
                            rate[which] = drain(a.transport(), w.queue(), a.consumer("bench-" + name,
                                    ConsumerKind.CREDIT_ACCOUNT), w.size());
                        }
                        exact &= db.sumOfBalances().subtract(before).compareTo(w.expectedCredit()) == 0;
                    }
                    String mode = batchedMode ? "batched (100)" : "one record per transaction";
                    lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8s", "round " + round + ", " + mode
                            + ": commit after settle", rate[0], "1.00"));
                    lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8.2f", "round " + round + ", " + mode
                            + ": offsets in the database", rate[1], rate[1] / rate[0]));
                }
            }
        }
        lines.add(String.format(Locale.ROOT, "offsets in the database: credits exact in every case: %s", exact));
        return lines;
    }

    /**
     * 5. Share groups: the same consume and end-to-end cases through an assembly with {@code kafka.consumption=share},
     * beside kafka-share-consumer-perf-test, each as a ratio to that and to the consumer group's rate of this run.
     */
    private static List<String> share(KafkaBroker broker, Map<String, String> flags, BenchDatabase db, double groupPerf,
            double groupOurs, double groupE2e) throws Exception {
        Map<String, String> shareFlags = new java.util.HashMap<>(flags);
        shareFlags.put("kafka.consumption", "share");
        AppSettings settings = AppSettings.resolve(new Sources(shareFlags, Map.of(), new Properties()));
        List<String> lines = new ArrayList<>();
        try (Assembly assembly = Assembly.start(settings)) {
            MessageTransport share = assembly.transport();
            String perfTopic = "bench-share-perf";
            String ourTopic = "bench-share-ours";
            produce(broker, perfTopic, RECORDS, true);
            produce(broker, ourTopic, RECORDS, true);
            double perf = sharePerfTest(broker, perfTopic, RECORDS);
            double ours = consumeAndAck(share, ourTopic, RECORDS);
            Workload w = Workload.credits("kafka-share-e2e", "bench-share-e2e", "bench-kafka-share-" + db.schema(), E2E,
                    0.3, 10_000, 22);
            Workload.publishAll(List.of(w), List.of(share), 16);
            BigDecimal before = db.sumOfBalances();
            BatchingConsumer<?> batched = assembly.batchedConsumer("bench-kafka-share-e2e", ConsumerKind.CREDIT_ACCOUNT,
                    BatchingConsumer.BatchSettings.defaults().withMaxBatch(100).withLinger(Duration.ofMillis(3))
                            .withWorkers(4));
            double e2e;
            try {
                e2e = drain(share, w.queue(), batched, w.size());
            } finally {
                batched.close();
            }
            boolean exact = db.sumOfBalances().subtract(before).compareTo(w.expectedCredit()) == 0;
            lines.add(String.format(Locale.ROOT, "%-58s %12s %8s %8s", "share group case", "records/s", "x perf",
                    "x group"));
            lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8s %8.2f", "kafka-share-consumer-perf-test (baseline)",
                    perf, "1.00", perf / groupPerf));
            lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8.2f %8.2f", "idemkit share subscription, ack each",
                    ours, ours / perf, ours / groupOurs));
            lines.add(String.format(Locale.ROOT, "%-58s %12.0f %8.2f %8.2f",
                    "idemkit share -> PostgreSQL inbox batched (30% dup)", e2e, e2e / perf, e2e / groupE2e));
            lines.add(String.format(Locale.ROOT, "share end to end credits exact: %s (x group: against the consumer"
                    + " group's same case of this run)", exact));
        }
        return lines;
    }

    /**
     * kafka-share-consumer-perf-test in a JVM of its own (its share group set to start at the earliest record first); its
     * nMsg.sec.
     */
    private static double sharePerfTest(KafkaBroker broker, String topic, int n) throws Exception {
        String group = "bench-share-perf-test";
        try (var admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers",
                broker.bootstrapServers()))) {
            admin.incrementalAlterConfigs(Map.of(new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.GROUP, group), List.of(
                    new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(
                            "share.auto.offset.reset", "earliest"),
                            org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        }
        return perfTool(broker, "org.apache.kafka.tools.ShareConsumerPerformance", List.of("--topic", topic,
                "--num-records", Integer.toString(n), "--group", group, "--timeout", "60000"), "nMsg.sec");
    }

    /**
     * 4. The outbox relay as shipped on Kafka ({@code dev.idemkit.adapters.postgres.RelayDrain}: PostgreSQL outbox, the
     * relay's defaults, the app's Kafka transport), every row its own key and 64 keys, against the plain and the
     * idempotent producer with the same number of records, 2 rounds interleaved after a warm-up.
     */
    private static List<String> relay(KafkaBroker broker, MessageTransport kafka) {
        int n = Integer.getInteger("bench.kafka.relayRows", 20_000);
        List<String> out = new ArrayList<>();
        out.add(String.format(Locale.ROOT, "outbox relay on Kafka, %,d rows each, x = / plain producer of the same round", n));
        dev.idemkit.adapters.postgres.RelayDrain.onTestDatabase(drain -> {
            try {
                relayRate(drain, broker, kafka, n, n); // warm-up: the relay's first run (JIT, the statements' plans)
                for (int round = 1; round <= 2; round++) {
                    double plain = produce(broker, "bench-relay-plain-" + round, n, false);
                    double idempotent = produce(broker, "bench-relay-idem-" + round, n, true);
                    double ownKeys = relayRate(drain, broker, kafka, n, n);
                    double keys64 = relayRate(drain, broker, kafka, n, 64);
                    out.add(String.format(Locale.ROOT, "round %d: plain producer %,.0f/s | idempotent producer %,.0f/s"
                            + " (%.2fx) | relay, every row its own key %,.0f/s (%.2fx) | relay, 64 keys %,.0f/s (%.2fx)",
                            round, plain, idempotent, idempotent / plain, ownKeys, ownKeys / plain, keys64, keys64 / plain));
                }
                return null;
            } catch (Exception e) {
                throw new IllegalStateException("the relay on Kafka failed", e);
            }
        });
        return out;
    }

    private static final java.util.concurrent.atomic.AtomicInteger RELAY_TOPICS = new java.util.concurrent.atomic.AtomicInteger();

    private static double relayRate(dev.idemkit.adapters.postgres.RelayDrain drain, KafkaBroker broker,
            MessageTransport kafka, int n, int keys) throws Exception {
        String topic = "bench-relay-" + RELAY_TOPICS.incrementAndGet();
        createTopic(broker, topic);
        // -Dbench.kafka.keyWindow=N: the relay's opt-in key window (docs/ARCHITECTURE.md section 9); 1 by default
        return drain.drain(kafka, topic, n, keys, dev.idemkit.ports.service.OutboxRelay.Settings.defaults()
                .withKeyWindow(Integer.getInteger("bench.kafka.keyWindow", 1))).rate();
    }

    private static void createTopic(KafkaBroker broker, String topic) throws Exception {
        try (var admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers",
                broker.bootstrapServers()))) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 3, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    /** Produces {@code n} 100-byte records with a message id, asynchronously; records per second until all acked. */
    private static double produce(KafkaBroker broker, String topic, int n, boolean idempotent) throws Exception {
        // the producer idemkit ships (publish, retry, dead-letter and redrive copies), and the same with idempotence off
        Properties p = KafkaMessageTransport.producerProperties(broker.settings());
        if (!idempotent) {
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
            p.put(ProducerConfig.ACKS_CONFIG, "1");
        }
        createTopic(broker, topic);
        byte[] body = new byte[100];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, body)).get(); // metadata and connection, not timed
            long t0 = System.nanoTime();
            for (int i = 1; i < n; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, body);
                r.headers().add("message_id", ("m-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                producer.send(r);
            }
            producer.flush();
            return (n - 1) / ((System.nanoTime() - t0) / 1e9);
        }
    }

    /** idemkit's subscription, acking every record: from the first record handed out to the last settled. */
    private static double consumeAndAck(MessageTransport kafka, String topic, int n) throws InterruptedException {
        AtomicLong first = new AtomicLong();
        AtomicLong count = new AtomicLong();
        AtomicLong last = new AtomicLong();
        Subscription s = kafka.subscribe(topic, d -> {
            first.compareAndSet(0, System.nanoTime());
            d.ack();
            if (count.incrementAndGet() == n) {
                last.set(System.nanoTime());
            }
        });
        awaitOrFail(() -> last.get() != 0, "idemkit consumed " + count.get() + " of " + n);
        s.close();
        return (n - 1) / ((last.get() - first.get()) / 1e9);
    }

    private static double drain(MessageTransport kafka, String topic, DeliveryHandler handler, int n)
            throws InterruptedException {
        AtomicLong first = new AtomicLong();
        AtomicLong settled = new AtomicLong();
        AtomicLong last = new AtomicLong();
        Subscription s = kafka.subscribe(topic, d -> {
            first.compareAndSet(0, System.nanoTime());
            handler.onDelivery(new dev.idemkit.ports.forwarding.ForwardingDelivery(d) {
                @Override
                public void ack() {
                    super.ack();
                    if (settled.incrementAndGet() == n) {
                        last.set(System.nanoTime());
                    }
                }
            });
        });
        awaitOrFail(() -> last.get() != 0, "end to end settled " + settled.get() + " of " + n);
        s.close();
        return (n - 1) / ((last.get() - first.get()) / 1e9);
    }

    /** kafka-consumer-perf-test in a JVM of its own; its fetch.nMsg.sec (records per second without the join). */
    private static double perfTest(KafkaBroker broker, String topic, int n) throws IOException, InterruptedException {
        return perfTool(broker, "org.apache.kafka.tools.ConsumerPerformance", List.of("--topic", topic, "--messages",
                Integer.toString(n), "--group", "bench-perf-test", "--timeout", "60000"), "fetch.nMsg.sec");
    }

    /** A kafka-tools performance tool in a JVM of its own; the {@code column} of its result line. */
    private static double perfTool(KafkaBroker broker, String tool, List<String> args, String column)
            throws IOException, InterruptedException {
        String cp = Files.readString(brokerClasspath()).trim();
        Path log = Files.createTempFile("idemkit-perf-test", ".log");
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx512m", "-cp", cp, tool, "--bootstrap-server", broker.bootstrapServers()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(tool + " failed: " + Files.readString(log));
        }
        List<String> out = Files.readAllLines(log);
        for (int i = 0; i < out.size() - 1; i++) {
            if (out.get(i).startsWith("start.time")) {
                String[] head = out.get(i).split(",\\s*");
                String[] row = out.get(i + 1).split(",\\s*");
                for (int c = 0; c < head.length; c++) {
                    if (head[c].trim().equals(column)) {
                        return Double.parseDouble(row[c].trim());
                    }
                }
            }
        }
        throw new IllegalStateException("no " + column + " in " + tool + "'s output: " + out);
    }

    private static Path brokerClasspath() {
        for (Path p = Paths.get("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path c = p.resolve("kafka-test-broker/target/broker.classpath");
            if (Files.isRegularFile(c)) {
                return c;
            }
        }
        throw new IllegalStateException("no kafka-test-broker/target/broker.classpath: ./mvnw install -DskipTests first");
    }

    private static void awaitOrFail(java.util.function.BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not done within 5 min: " + what);
            }
            Thread.sleep(5);
        }
    }
}
