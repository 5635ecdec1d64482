package dev.idemkit.benchmarks.spring.outbox;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.benchmarks.spring.BenchResults;
import dev.idemkit.testsupport.MidStreamKills;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * idemkit's outbox relay beside Spring Modulith's event publication registry (issue 33 item 3), each a Spring Boot
 * service ({@link OutboxServices}) with its own schema and destination, on the machine's PostgreSQL, in one run,
 * rounds interleaved, on each broker of {@code bench.outbox.brokers}:
 * <ul>
 *   <li>{@code kafka}: the relay on adapters-kafka's transport beside Modulith's Kafka externalization, a topic of 4
 *       partitions each on a private KRaft broker;</li>
 *   <li>{@code rabbit}: the relay on the transport the starter makes for RabbitMQ beside Modulith's registry with an
 *       {@code @ApplicationModuleListener} sending through {@code RabbitTemplate} with publisher confirms, a quorum
 *       queue each on the machine's RabbitMQ.</li>
 * </ul>
 * Measured for each:
 * <ul>
 *   <li>throughput: {@code bench.threads} threads commit {@code bench.events} credits, each with its event, as fast as
 *       they can; from the first commit's start until a plain consumer (reading from the destination's end when the
 *       round began) received every event: events per second, and how many were never received or received twice;</li>
 *   <li>latency: one credit every 10 ms ({@code bench.latencyEvents} of them): from the commit's return to the
 *       consumer's receipt, p50 and p99.</li>
 * </ul>
 * <pre>./mvnw -q -pl benchmarks-spring exec:java -Dexec.mainClass=dev.idemkit.benchmarks.spring.outbox.OutboxPeersBenchmark</pre>
 * Then the SIGKILL comparison ({@link #kills}): {@code bench.kill.events} (3000) credits committed by the service in a
 * JVM of its own, killed {@code bench.kills} (3; 0 leaves it out) times mid-stream: idemkit, Modulith republishing its
 * outstanding publications when it starts (the setting its reference documentation gives for a crash), and
 * {@code modulith-default}, Modulith's defaults (which do not).
 * Properties: {@code bench.events} (4000), {@code bench.threads} (4), {@code bench.rounds} (3),
 * {@code bench.latencyEvents} (300), {@code bench.outbox.brokers} (kafka,rabbit).
 */
public final class OutboxPeersBenchmark {
    private static final int PARTITIONS = 4;
    private static final int ACCOUNTS = 100;

    private OutboxPeersBenchmark() {}

    /** A service: its name, the broker it publishes to, its schema and destination (topic or queue). */
    private record Service(String name, String broker, String schema, String destination,
            ConfigurableApplicationContext context) {
        OutboxServices.Credits credits() {
            return context.getBean(OutboxServices.Credits.class);
        }
    }

    /** One timed run of one service. */
    private record Run(double rate, long lost, long twice, double p50, double p99) {}

    public static void main(String[] args) throws Exception {
        List<String> brokers = Arrays.stream(System.getProperty("bench.outbox.brokers", "kafka,rabbit").split(","))
                .map(String::trim).toList();
        for (String broker : brokers) {
            if (!broker.equals("kafka") && !broker.equals("rabbit")) {
                throw new IllegalArgumentException("unknown broker '" + broker + "' in bench.outbox.brokers; known:"
                        + " kafka, rabbit");
            }
        }
        for (String broker : brokers) {
            run(broker);
        }
        System.exit(0); // the shared Kafka broker's JVM is stopped by its shutdown hook
    }

    private static void run(String broker) throws Exception {
        int events = Integer.getInteger("bench.events", 4000);
        int threads = Integer.getInteger("bench.threads", 4);
        int rounds = Integer.getInteger("bench.rounds", 3);
        int latencyEvents = Integer.getInteger("bench.latencyEvents", 300);
        KafkaSettings settings = broker.equals("kafka") ? KafkaBroker.shared().settings().withPartitions(PARTITIONS)
                : null;
        List<Service> services = new ArrayList<>();
        Map<String, List<Run>> throughput = new LinkedHashMap<>();
        Map<String, Run> latency = new LinkedHashMap<>();
        List<String[]> killRows = new ArrayList<>();
        try (Destinations destinations = broker.equals("kafka") ? new KafkaDestinations(settings)
                : new RabbitDestinations()) {
            try {
                services.add(start("idemkit", broker, destinations));
                services.add(start("modulith", broker, destinations));
                System.out.printf(Locale.ROOT, "outbox peers on %s: %d events per round from %d threads, %d rounds;"
                        + " latency: %d events, one every 10 ms%n", broker, events, threads, rounds, latencyEvents);
                for (Service s : services) {
                    run(s, destinations, Math.max(500, events / 4), threads, false); // warm-up
                }
                for (int r = 0; r < rounds; r++) {
                    for (int i = 0; i < services.size(); i++) {
                        Service s = services.get((i + r) % services.size());
                        Run run = run(s, destinations, events, threads, false);
                        throughput.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(run);
                        System.out.printf(Locale.ROOT, "round %d %-8s %,8.0f events/s lost=%d twice=%d%n", r + 1,
                                s.name(), run.rate(), run.lost(), run.twice());
                    }
                }
                for (Service s : services) {
                    Run run = run(s, destinations, latencyEvents, 1, true);
                    latency.put(s.name(), run);
                    System.out.printf(Locale.ROOT, "latency %-8s p50 %.1f ms p99 %.1f ms lost=%d twice=%d%n", s.name(),
                            run.p50(), run.p99(), run.lost(), run.twice());
                }
            } finally {
                for (Service s : services) {
                    s.context().close();
                    TestPostgres.dropSchema(s.schema());
                    destinations.delete(s.destination());
                }
            }
            int kills = Integer.getInteger("bench.kills", 3);
            if (kills > 0) {
                for (String name : List.of("idemkit", "modulith", "modulith-default")) {
                    String[] row = kills(name, broker, destinations, Integer.getInteger("bench.kill.events", 3000),
                            kills);
                    System.out.println("outbox-kills " + String.join(" ", row));
                    killRows.add(row);
                }
            }
        }
        List<Double> idemkit = throughput.get("idemkit").stream().map(Run::rate).toList();
        System.out.println();
        System.out.println("| broker | service | events/s (median) | idemkit / service (per round) | commit -> consumer"
                + " p50 | p99 (one event every 10 ms) | lost | received twice |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (var e : throughput.entrySet()) {
            List<Double> rates = e.getValue().stream().map(Run::rate).toList();
            Run l = latency.get(e.getKey());
            System.out.printf(Locale.ROOT, "| %s | %s | %,.0f | %s | %.1f ms | %.1f ms | %d | %d |%n", broker,
                    e.getKey(), BenchResults.median(rates),
                    e.getKey().equals("idemkit") ? "1" : BenchResults.ratios(idemkit, rates), l.p50(), l.p99(),
                    e.getValue().stream().mapToLong(Run::lost).sum() + l.lost(),
                    e.getValue().stream().mapToLong(Run::twice).sum() + l.twice());
        }
        if (!killRows.isEmpty()) {
            System.out.println();
            System.out.println("| broker | service | SIGKILLs | credits committed | their event never received |"
                    + " received more than once | seconds |");
            System.out.println("|---|---|---|---|---|---|---|");
            killRows.forEach(r -> System.out.println("| " + String.join(" | ", r) + " |"));
        }
        System.out.println();
    }

    static Class<?> config(String name, String broker) {
        boolean idemkit = name.equals("idemkit");
        if (broker.equals("kafka")) {
            return idemkit ? OutboxServices.IdemkitService.class : OutboxServices.ModulithService.class;
        }
        return idemkit ? OutboxServices.IdemkitRabbitService.class : OutboxServices.ModulithRabbitService.class;
    }

    private static Service start(String name, String broker, Destinations destinations) throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_outbox");
        String destination = destinations.declare("bench-outbox-" + name);
        createSchema(schema, "SELECT 'a' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        ConfigurableApplicationContext context = new SpringApplicationBuilder(config(name, broker))
                .web(WebApplicationType.NONE)
                .properties(properties(name, broker, schema, destination, destinations).toArray(String[]::new)).run();
        return new Service(name, broker, schema, destination, context);
    }

    /** A service's schema with its {@code accounts}, filled by {@code accounts} (a query of {@code (id, 0)} rows). */
    static void createSchema(String schema, String accounts) throws Exception {
        try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
            s.execute("CREATE TABLE " + schema + ".accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
            s.execute("INSERT INTO " + schema + ".accounts " + accounts);
        }
    }

    /**
     * The Spring properties of a service: its schema and destination, the broker's connection, and each side's own
     * settings (Modulith: the registry's table, and outstanding publications republished when the service starts, the
     * setting its reference documentation gives for events whose publication a crash interrupted).
     */
    static List<String> properties(String name, String broker, String schema, String destination,
            Destinations destinations) {
        String url = TestPostgres.URL + (TestPostgres.URL.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        List<String> props = new ArrayList<>(List.of(
                "spring.datasource.url=" + url,
                "spring.datasource.username=" + TestPostgres.USER,
                "spring.datasource.password=" + TestPostgres.PASSWORD,
                "spring.datasource.hikari.maximum-pool-size=8",
                "bench.topic=" + destination,
                "bench.queue=" + destination,
                "idemkit.postgres.schema=" + schema,
                "logging.level.root=WARN"));
        props.addAll(destinations.properties());
        if (name.equals("idemkit")) {
            props.add("idemkit.outbox.enabled=true");
            props.add("idemkit.outbox.destinations.credit-applied=" + destination);
            props.add(BenchResults.NO_MODULITH);
        } else {
            props.add("idemkit.enabled=false");
            props.add("spring.modulith.events.jdbc.schema-initialization.enabled=true");
            if (!name.equals("modulith-default")) { // the kill comparison's third service: Modulith's defaults
                props.add("spring.modulith.events.republish-outstanding-events-on-restart=true");
            }
            if (broker.equals("kafka")) {
                props.add("spring.kafka.producer.value-serializer="
                        + "org.apache.kafka.common.serialization.ByteArraySerializer");
            } else {
                props.add("spring.modulith.events.externalization.enabled=false");
                props.add("spring.rabbitmq.publisher-confirm-type=simple");
            }
        }
        return props;
    }

    /**
     * The SIGKILL comparison: the service runs in a JVM of its own ({@link OutboxServiceChild}) committing credits with
     * their events as fast as it can (2 threads, each credit an account of its own), and is SIGKILLed mid-stream
     * {@code kills} times ({@link MidStreamKills}), restarted each time to go on from the highest committed credit,
     * until a last instance has committed {@code total} and neither the commits nor the events received moved for 3 s
     * (it is then stopped with SIGTERM). Then, per committed
     * credit: its event never received (lost) or received more than once (published twice: at-least-once, what an
     * idempotent consumer absorbs).
     */
    private static String[] kills(String name, String broker, Destinations destinations, int total, int kills)
            throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_outbox_kill");
        String destination = destinations.declare("bench-outbox-kill-" + name);
        String tag = Names.tag(8);
        int spare = 200; // indices a kill leaves unwritten between two threads' commits
        createSchema(schema, "SELECT 'k' || g, 0 FROM generate_series(0, " + (total + spare) + ") g");
        Map<String, Integer> received = new ConcurrentHashMap<>();
        String classpath = MidStreamKills.classpath(OutboxPeersBenchmark.class);
        List<String> props = properties(name, broker, schema, destination, destinations);
        try (java.sql.Connection poll = TestPostgres.connect();
                AutoCloseable reader = destinations.read(destination,
                        body -> received.merge(body.replace("\"", ""), 1, Integer::sum))) {
            MidStreamKills.Probe committed = () -> BenchResults.accounts(poll, schema, "balance > 0");
            double seconds = MidStreamKills.run(() -> {
                long from = highest(poll, schema) + 1;
                long to = from + (total - committed.read());
                List<String> args = new ArrayList<>(List.of(name, broker, tag, Long.toString(from), Long.toString(to)));
                args.addAll(props);
                return MidStreamKills.startReady(OutboxServiceChild.class.getName(), classpath,
                        "outbox-" + broker + "-" + name + "-" + Names.tag(8), args, Duration.ofSeconds(90));
                // progress: credits committed plus events received, so that the last instance is stopped only once
                // both stood still for 3 s (an event never received is then counted lost, not waited for forever)
            }, () -> committed.read() + received.size(), () -> 0, 2L * total, kills, Duration.ofSeconds(3),
                    Duration.ofSeconds(180));
            long lost = 0;
            long twice = 0;
            try (Statement st = poll.createStatement();
                    java.sql.ResultSet rs = st.executeQuery("SELECT id FROM " + schema + ".accounts WHERE balance > 0")) {
                while (rs.next()) {
                    Integer copies = received.get(tag + "-" + rs.getString(1).substring(1));
                    lost += copies == null ? 1 : 0;
                    twice += copies != null && copies > 1 ? 1 : 0;
                }
            }
            long committedCount = committed.read();
            return new String[] {broker, name, Integer.toString(kills), Long.toString(committedCount),
                    Long.toString(lost), Long.toString(twice), String.format(Locale.ROOT, "%.1f", seconds)};
        } finally {
            TestPostgres.dropSchema(schema);
            destinations.delete(destination);
        }
    }

    /** The highest index of a committed credit ({@code k<index>}), -1 before the first. */
    private static long highest(java.sql.Connection c, String schema) throws Exception {
        try (Statement st = c.createStatement(); java.sql.ResultSet rs = st.executeQuery(
                "SELECT coalesce(max(substr(id, 2)::bigint), -1) FROM " + schema + ".accounts WHERE balance > 0")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Commits {@code events} credits from {@code threads} threads (paced: one every 10 ms) while a plain reader takes
     * the destination from where it ended when the run began, until every event arrived (or 120 s passed).
     */
    private static Run run(Service s, Destinations destinations, int events, int threads, boolean paced)
            throws Exception {
        String tag = Names.tag(8);
        Map<String, Long> committed = new ConcurrentHashMap<>();
        Map<String, Long> received = new ConcurrentHashMap<>();
        AtomicLong twice = new AtomicLong();
        try (AutoCloseable reader = destinations.read(s.destination(), body -> {
            String id = body.replace("\"", "");
            if (received.putIfAbsent(id, System.nanoTime()) != null) {
                twice.incrementAndGet();
            }
        })) {
            long began = System.nanoTime();
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

    /** A broker's destinations for the services, the Spring properties that reach it, and a plain reader of each. */
    interface Destinations extends AutoCloseable {
        /** Declares a new destination named after {@code purpose}; returns its name. */
        String declare(String purpose) throws Exception;

        void delete(String destination) throws Exception;

        List<String> properties();

        /** Starts reading {@code destination} from its current end, handing each message's body to {@code bodies}. */
        AutoCloseable read(String destination, Consumer<String> bodies) throws Exception;
    }

    /** Kafka: a topic of 4 partitions each, read by a plain consumer assigned every partition at its end. */
    private static final class KafkaDestinations implements Destinations {
        private final KafkaSettings settings;
        private final KafkaMessageTransport admin;

        KafkaDestinations(KafkaSettings settings) {
            this.settings = settings;
            this.admin = new KafkaMessageTransport(settings);
        }

        @Override
        public String declare(String purpose) {
            String topic = KafkaBroker.uniqueTopic(purpose);
            admin.declare(topic);
            return topic;
        }

        @Override
        public void delete(String topic) {
            admin.deleteTopics(topic);
        }

        @Override
        public List<String> properties() {
            return List.of("spring.kafka.bootstrap-servers=" + settings.bootstrapServers());
        }

        @Override
        public AutoCloseable read(String topic, Consumer<String> bodies) {
            Properties p = new Properties();
            p.put("bootstrap.servers", settings.bootstrapServers());
            KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
            List<TopicPartition> partitions = new ArrayList<>();
            for (int i = 0; i < PARTITIONS; i++) {
                partitions.add(new TopicPartition(topic, i));
            }
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position); // resolve the ends now, before anything is committed
            AtomicBoolean stop = new AtomicBoolean();
            Thread reader = new Thread(() -> {
                try (consumer) {
                    while (!stop.get()) {
                        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                            bodies.accept(new String(r.value(), StandardCharsets.UTF_8));
                        }
                    }
                }
            }, "outbox-peers-kafka-reader");
            reader.start();
            return () -> {
                stop.set(true);
                reader.join();
            };
        }

        @Override
        public void close() {
            admin.close();
        }
    }

    /**
     * RabbitMQ: a quorum queue each (the durable, replicated type RabbitMQ recommends), declared before the services
     * start (idemkit's relay declares nothing), read by a plain consumer with automatic acknowledgement.
     */
    private static final class RabbitDestinations implements Destinations {
        private final Connection connection;

        RabbitDestinations() throws Exception {
            this.connection = TestRabbit.rawConnection("idemkit-bench-outbox-peers");
        }

        @Override
        public String declare(String purpose) throws Exception {
            String queue = TestRabbit.unique(purpose);
            try (Channel ch = connection.createChannel()) {
                ch.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum"));
            }
            return queue;
        }

        @Override
        public void delete(String queue) throws Exception {
            try (Channel ch = connection.createChannel()) {
                ch.queueDelete(queue);
            }
        }

        @Override
        public List<String> properties() {
            URI amqp = URI.create(TestRabbit.URI);
            String[] user = amqp.getUserInfo() == null ? new String[] {"guest", "guest"}
                    : amqp.getUserInfo().split(":", 2);
            return List.of("spring.rabbitmq.host=" + amqp.getHost(),
                    "spring.rabbitmq.port=" + (amqp.getPort() > 0 ? amqp.getPort() : 5672),
                    "spring.rabbitmq.username=" + user[0],
                    "spring.rabbitmq.password=" + (user.length > 1 ? user[1] : ""));
        }

        @Override
        public AutoCloseable read(String queue, Consumer<String> bodies) throws Exception {
            Channel ch = connection.createChannel();
            ch.basicQos(1000);
            ch.basicConsume(queue, true, (tag, delivery) -> bodies.accept(
                    new String(delivery.getBody(), StandardCharsets.UTF_8)), tag -> { });
            return ch::close;
        }

        @Override
        public void close() throws Exception {
            connection.close();
        }
    }

    private static double percentile(List<Double> sorted, double q) {
        return sorted.isEmpty() ? Double.NaN : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
    }
}
