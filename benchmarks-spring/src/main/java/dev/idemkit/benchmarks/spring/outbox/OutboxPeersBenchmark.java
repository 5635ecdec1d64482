package dev.idemkit.benchmarks.spring.outbox;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.benchmarks.spring.BenchResults;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * idemkit's outbox relay beside Spring Modulith's event externalization (issue 33 item 3), each a Spring Boot service
 * ({@link OutboxServices}) with its own schema and topic (4 partitions) on a private KRaft broker and the machine's
 * PostgreSQL, in one run, rounds interleaved:
 * <ul>
 *   <li>throughput: {@code bench.threads} threads commit {@code bench.events} credits, each with its event, as fast as
 *       they can; from the first commit's start until a plain consumer (assigned the topic's partitions from their
 *       ends) received every event: events per second, and how many were never received or received twice;</li>
 *   <li>latency: one credit every 10 ms ({@code bench.latencyEvents} of them): from the commit's return to the
 *       consumer's receipt, p50 and p99.</li>
 * </ul>
 * <pre>./mvnw -q -pl benchmarks-spring exec:java -Dexec.mainClass=dev.idemkit.benchmarks.spring.outbox.OutboxPeersBenchmark</pre>
 * Properties: {@code bench.events} (4000), {@code bench.threads} (4), {@code bench.rounds} (3),
 * {@code bench.latencyEvents} (300).
 */
public final class OutboxPeersBenchmark {
    private static final int PARTITIONS = 4;
    private static final int ACCOUNTS = 100;

    private OutboxPeersBenchmark() {}

    private record Service(String name, String schema, String topic, ConfigurableApplicationContext context) {
        OutboxServices.Credits credits() {
            return context.getBean(OutboxServices.Credits.class);
        }
    }

    /** One timed run of one service. */
    private record Run(double rate, long lost, long twice, double p50, double p99) {}

    public static void main(String[] args) throws Exception {
        int events = Integer.getInteger("bench.events", 4000);
        int threads = Integer.getInteger("bench.threads", 4);
        int rounds = Integer.getInteger("bench.rounds", 3);
        int latencyEvents = Integer.getInteger("bench.latencyEvents", 300);
        KafkaSettings settings = KafkaBroker.shared().settings().withPartitions(PARTITIONS);
        List<Service> services = new ArrayList<>();
        Map<String, List<Run>> throughput = new LinkedHashMap<>();
        Map<String, Run> latency = new LinkedHashMap<>();
        try (KafkaMessageTransport admin = new KafkaMessageTransport(settings)) {
            try {
                services.add(start("idemkit", OutboxServices.IdemkitService.class, settings, admin));
                services.add(start("modulith", OutboxServices.ModulithService.class, settings, admin));
                System.out.printf(Locale.ROOT, "outbox peers: %d events per round from %d threads, %d rounds;"
                        + " latency: %d events, one every 10 ms%n", events, threads, rounds, latencyEvents);
                for (Service s : services) {
                    run(s, settings, Math.max(500, events / 4), threads, false); // warm-up
                }
                for (int r = 0; r < rounds; r++) {
                    for (int i = 0; i < services.size(); i++) {
                        Service s = services.get((i + r) % services.size());
                        Run run = run(s, settings, events, threads, false);
                        throughput.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(run);
                        System.out.printf(Locale.ROOT, "round %d %-8s %,8.0f events/s lost=%d twice=%d%n", r + 1,
                                s.name(), run.rate(), run.lost(), run.twice());
                    }
                }
                for (Service s : services) {
                    Run run = run(s, settings, latencyEvents, 1, true);
                    latency.put(s.name(), run);
                    System.out.printf(Locale.ROOT, "latency %-8s p50 %.1f ms p99 %.1f ms lost=%d twice=%d%n", s.name(),
                            run.p50(), run.p99(), run.lost(), run.twice());
                }
            } finally {
                for (Service s : services) {
                    s.context().close();
                    TestPostgres.dropSchema(s.schema());
                    admin.deleteTopics(s.topic());
                }
            }
        }
        List<Double> idemkit = throughput.get("idemkit").stream().map(Run::rate).toList();
        System.out.println();
        System.out.println("| service | events/s (median) | idemkit / service (per round) | commit -> consumer p50 |"
                + " p99 (one event every 10 ms) | lost | received twice |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (var e : throughput.entrySet()) {
            List<Double> rates = e.getValue().stream().map(Run::rate).toList();
            Run l = latency.get(e.getKey());
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %s | %.1f ms | %.1f ms | %d | %d |%n", e.getKey(),
                    BenchResults.median(rates), e.getKey().equals("idemkit") ? "1" : BenchResults.ratios(idemkit, rates),
                    l.p50(), l.p99(), e.getValue().stream().mapToLong(Run::lost).sum() + l.lost(),
                    e.getValue().stream().mapToLong(Run::twice).sum() + l.twice());
        }
        System.exit(0); // the shared broker's JVM is stopped by its shutdown hook
    }

    private static Service start(String name, Class<?> config, KafkaSettings settings, KafkaMessageTransport admin)
            throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_outbox");
        String topic = KafkaBroker.uniqueTopic("bench-outbox-" + name);
        try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
            s.execute("CREATE TABLE " + schema + ".accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
            s.execute("INSERT INTO " + schema + ".accounts SELECT 'a' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1)
                    + ") g");
        }
        admin.declare(topic);
        String url = TestPostgres.URL + (TestPostgres.URL.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        List<String> props = new ArrayList<>(List.of(
                "spring.datasource.url=" + url,
                "spring.datasource.username=" + TestPostgres.USER,
                "spring.datasource.password=" + TestPostgres.PASSWORD,
                "spring.datasource.hikari.maximum-pool-size=8",
                "spring.kafka.bootstrap-servers=" + settings.bootstrapServers(),
                "bench.topic=" + topic,
                "idemkit.postgres.schema=" + schema,
                "logging.level.root=WARN"));
        if (name.equals("idemkit")) {
            props.add("idemkit.outbox.enabled=true");
            props.add("idemkit.outbox.destinations.credit-applied=" + topic);
            props.add(BenchResults.NO_MODULITH);
        } else {
            props.add("idemkit.enabled=false");
            props.add("spring.modulith.events.jdbc.schema-initialization.enabled=true");
            props.add("spring.kafka.producer.value-serializer="
                    + "org.apache.kafka.common.serialization.ByteArraySerializer");
        }
        ConfigurableApplicationContext context = new SpringApplicationBuilder(config)
                .web(WebApplicationType.NONE).properties(props.toArray(String[]::new)).run();
        return new Service(name, schema, topic, context);
    }

    /**
     * Commits {@code events} credits from {@code threads} threads (paced: one every 10 ms) while a consumer reads the
     * topic from its current ends, until every event arrived (or 120 s passed).
     */
    private static Run run(Service s, KafkaSettings settings, int events, int threads, boolean paced)
            throws Exception {
        String tag = Names.tag(8);
        Map<String, Long> committed = new ConcurrentHashMap<>();
        Map<String, Long> received = new ConcurrentHashMap<>();
        AtomicLong twice = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        Properties p = new Properties();
        p.put("bootstrap.servers", settings.bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int i = 0; i < PARTITIONS; i++) {
                partitions.add(new TopicPartition(s.topic(), i));
            }
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position); // resolve the ends now, before anything is committed
            Thread reader = new Thread(() -> {
                while (!stop.get()) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                        String id = new String(r.value(), StandardCharsets.UTF_8).replace("\"", "");
                        if (received.putIfAbsent(id, System.nanoTime()) != null) {
                            twice.incrementAndGet();
                        }
                    }
                }
            }, "outbox-peers-consumer");
            long began = System.nanoTime();
            reader.start();
            List<Thread> writers = new ArrayList<>();
            AtomicLong next = new AtomicLong();
            for (int t = 0; t < threads; t++) {
                Thread w = new Thread(() -> {
                    for (long i = next.getAndIncrement(); i < events; i = next.getAndIncrement()) {
                        String id = tag + "-" + i;
                        s.credits().credit(id, "a" + (i % ACCOUNTS));
                        committed.put(id, System.nanoTime());
                        if (paced) {
                            try {
                                Thread.sleep(10);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                return;
                            }
                        }
                    }
                }, "outbox-peers-writer-" + t);
                w.start();
                writers.add(w);
            }
            for (Thread w : writers) {
                w.join();
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (received.size() < events && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            long last = received.values().stream().mapToLong(Long::longValue).max().orElse(System.nanoTime());
            Thread.sleep(paced ? 0 : 200); // a late second copy of an event is counted too
            stop.set(true);
            reader.join();
            List<Double> latencies = new ArrayList<>();
            for (var e : committed.entrySet()) {
                Long got = received.get(e.getKey());
                if (got != null) {
                    latencies.add(Math.max(0, got - e.getValue()) / 1e6);
                }
            }
            latencies.sort(null);
            long lost = committed.keySet().stream().filter(id -> !received.containsKey(id)).count();
            return new Run(events / ((last - began) / 1e9), lost, twice.get(), percentile(latencies, 0.50),
                    percentile(latencies, 0.99));
        }
    }

    private static double percentile(List<Double> sorted, double q) {
        return sorted.isEmpty() ? Double.NaN : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
    }
}
