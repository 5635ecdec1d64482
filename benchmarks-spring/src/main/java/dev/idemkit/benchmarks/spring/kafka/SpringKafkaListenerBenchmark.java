package dev.idemkit.benchmarks.spring.kafka;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.benchmarks.spring.BenchResults;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;

/**
 * The starter's idempotent {@code @KafkaListener} beside the one a Spring user writes without idemkit
 * ({@code @Transactional}, {@code INSERT ... ON CONFLICT DO NOTHING}), with the same container settings, at each
 * concurrency, rounds interleaved in one run (each round starting with the next service in turn), on a real Kafka
 * broker (a private KRaft node, {@code KafkaBroker}) and the machine's PostgreSQL. Each variant is a real Spring Boot service with its own schema, topic (4 partitions) and
 * consumer group; a round publishes the same stream to each topic (30 % of the records repeat an earlier id with its
 * value), starts the listener container, and times until every unique credit is in the database; then, untimed, it
 * waits until the group committed the whole topic, stops the container and checks that the total is exact. Ratios
 * are idemkit over the hand-written listener of the same round.
 *
 * <pre>./mvnw -q -B install -DskipTests &amp;&amp; ./mvnw -q -pl benchmarks-spring exec:java \
 *     -Dexec.mainClass=dev.idemkit.benchmarks.spring.kafka.SpringKafkaListenerBenchmark</pre>
 * Properties: {@code bench.messages} (10000), {@code bench.rounds} (3), {@code bench.concurrency} (1,4),
 * {@code bench.duplicates} (0.3), {@code bench.accounts} (100), {@code bench.variants}
 * (idemkit,hand-written,retryable-topic), {@code bench.poison} (true: the poison record's timing, {@link #poison}).
 */
public final class SpringKafkaListenerBenchmark {
    private static final int ACCOUNTS = Integer.getInteger("bench.accounts", 100);
    static final int PARTITIONS = 4;
    private static final List<String> VARIANTS = List.of(System.getProperty("bench.variants",
            "idemkit,hand-written,retryable-topic").split(","));
    private static List<String> poisons;

    /** The Spring configuration of a variant. */
    static Class<?> config(String variant) {
        return switch (variant) {
            case "idemkit" -> KafkaCreditListeners.IdemkitService.class;
            case "hand-written" -> KafkaCreditListeners.HandWrittenService.class;
            case "retryable-topic" -> KafkaCreditListeners.RetryableTopicService.class;
            default -> throw new IllegalArgumentException("unknown variant '" + variant + "'; known: idemkit,"
                    + " hand-written, retryable-topic");
        };
    }

    private SpringKafkaListenerBenchmark() {}

    /** One Spring service of one variant at one concurrency, its schema, topic, group and listener container. */
    private record Service(String variant, int concurrency, String schema, String topic, String group,
            ConfigurableApplicationContext context) {
        /** Starts every container of the service: the listener's and, with {@code @RetryableTopic}, its retry topics'. */
        void start() {
            startContainers(context);
        }

        void stop() {
            context.getBean(KafkaListenerEndpointRegistry.class).getAllListenerContainers()
                    .forEach(MessageListenerContainer::stop);
        }
    }

    public static void main(String[] args) throws Exception {
        int messages = Integer.getInteger("bench.messages", 10_000);
        int rounds = Integer.getInteger("bench.rounds", 3);
        double duplicates = Double.parseDouble(System.getProperty("bench.duplicates", "0.3"));
        int[] concurrencies = Arrays.stream(System.getProperty("bench.concurrency", "1,4").split(","))
                .map(String::trim).mapToInt(Integer::parseInt).toArray();
        KafkaSettings settings = KafkaBroker.shared().settings().withPartitions(PARTITIONS);
        List<Service> services = new ArrayList<>();
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", settings.bootstrapServers());
        try (KafkaMessageTransport producer = new KafkaMessageTransport(settings);
                Admin admin = Admin.create(adminProps)) {
            try {
                for (int c : concurrencies) {
                    for (String v : VARIANTS) {
                        services.add(start(v, config(v), c, producer));
                    }
                }
                System.out.printf(Locale.ROOT, "spring kafka listener benchmark: %d records per round (%.0f %%"
                        + " duplicates), %d rounds, %d partitions, concurrency %s%n", messages, duplicates * 100,
                        rounds, PARTITIONS, Arrays.toString(concurrencies));
                round(services, producer, admin, Math.max(1_000, messages / 2), duplicates, -1, null); // warm-up
                for (int r = 0; r < rounds; r++) {
                    round(services, producer, admin, messages, duplicates, r, rates);
                }
                if (Boolean.parseBoolean(System.getProperty("bench.poison", "true"))) {
                    poisons = new ArrayList<>();
                    for (Service s : services) {
                        if (s.concurrency() == concurrencies[0]) {
                            poisons.add(poison(s, producer, admin));
                        }
                    }
                }
            } finally {
                for (Service s : services) {
                    s.context().close();
                    TestPostgres.dropSchema(s.schema());
                    producer.deleteTopics(s.topic());
                }
            }
        }
        report(concurrencies, rates);
        if (poisons != null) {
            System.out.println();
            System.out.println("| service | poison record dead-lettered after | its partition blocked for (the record"
                    + " behind it credited after) | where it went |");
            System.out.println("|---|---|---|---|");
            poisons.forEach(System.out::println);
        }
        System.exit(0); // the shared broker's JVM is stopped by its shutdown hook
    }

    private static Service start(String variant, Class<?> config, int concurrency, KafkaMessageTransport producer)
            throws SQLException {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_kafka");
        String topic = KafkaBroker.uniqueTopic("bench-spring-" + variant);
        String group = "bench-" + Names.tag(8);
        createSchema(schema, "SELECT 'a' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        producer.declare(topic); // 4 partitions, before the service subscribes
        List<String> props = properties(variant, concurrency, schema, topic, group,
                producer.settings().bootstrapServers());
        ConfigurableApplicationContext context = new SpringApplicationBuilder(config)
                .web(WebApplicationType.NONE).properties(props.toArray(String[]::new)).run();
        return new Service(variant, concurrency, schema, topic, group, context);
    }

    /**
     * A service's schema: {@code accounts} filled by {@code accounts} (a query of {@code (id, 0)} rows), and the
     * hand-written listeners' dedup table, as their author would create it.
     */
    static void createSchema(String schema, String accounts) throws SQLException {
        try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
            s.execute("CREATE TABLE " + schema + ".accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
            s.execute("INSERT INTO " + schema + ".accounts " + accounts);
            s.execute("CREATE TABLE " + schema + ".processed (message_id text PRIMARY KEY,"
                    + " processed_at timestamptz NOT NULL DEFAULT now())");
        }
    }

    /** The Spring properties of a variant's service: the same for all but idemkit's switch. */
    static List<String> properties(String variant, int concurrency, String schema, String topic, String group,
            String bootstrap) {
        String url = TestPostgres.URL + (TestPostgres.URL.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        List<String> props = new ArrayList<>(List.of(
                "spring.datasource.url=" + url,
                "spring.datasource.username=" + TestPostgres.USER,
                "spring.datasource.password=" + TestPostgres.PASSWORD,
                "spring.datasource.hikari.maximum-pool-size=" + (concurrency + 2),
                "spring.kafka.bootstrap-servers=" + bootstrap,
                "spring.kafka.consumer.auto-offset-reset=earliest",
                "spring.kafka.listener.concurrency=" + concurrency,
                "bench.topic=" + topic,
                "bench.group=" + group,
                "idemkit.postgres.schema=" + schema,
                "logging.level.root=WARN", BenchResults.NO_MODULITH));
        props.add(variant.equals("idemkit") ? "idemkit.kafka.idempotent-listeners=true" : "idemkit.enabled=false");
        return props;
    }

    /** Starts every listener container of a service: the listener's and, with {@code @RetryableTopic}, its retry topics'. */
    static void startContainers(ConfigurableApplicationContext context) {
        context.getBean(KafkaListenerEndpointRegistry.class).getAllListenerContainers()
                .forEach(MessageListenerContainer::start);
    }

    private static void round(List<Service> services, KafkaMessageTransport producer, Admin admin, int messages,
            double duplicates, int round, Map<String, List<Double>> rates) throws Exception {
        String tag = Names.tag(8);
        Random random = new Random(round + 17L);
        List<String[]> stream = new ArrayList<>(messages); // {id, value}
        long expected = 0;
        for (int i = 0; i < messages; i++) {
            if (i > 0 && random.nextDouble() < duplicates) {
                stream.add(stream.get(random.nextInt(stream.size())));
            } else {
                long amount = 1 + random.nextInt(9);
                expected += amount;
                stream.add(new String[] {tag + "-" + i, "a" + random.nextInt(ACCOUNTS) + ":" + amount});
            }
        }
        for (int i = 0; i < services.size(); i++) {
            Service s = services.get((i + Math.max(0, round)) % services.size()); // each round starts with the next
            try (java.sql.Connection poll = TestPostgres.connect()) {
                try (Statement vacuum = poll.createStatement()) {
                    vacuum.execute("VACUUM ANALYZE " + s.schema() + ".accounts");
                }
                long before = BenchResults.total(poll, s.schema());
                publish(producer, s.topic(), stream);
                long start = System.nanoTime();
                s.start();
                long deadline = start + TimeUnit.MINUTES.toNanos(5);
                while (BenchResults.total(poll, s.schema()) < before + expected) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(s.variant() + " c" + s.concurrency() + " did not apply the"
                                + " round's credits within 5 minutes");
                    }
                    Thread.sleep(10);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                // untimed: the duplicates behind the last credit consumed and the whole topic committed, so that the
                // next round starts from its own records
                while (lag(admin, s.group(), s.topic()) > 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(s.variant() + " c" + s.concurrency() + " did not commit the"
                                + " round's records within 5 minutes");
                    }
                    Thread.sleep(50);
                }
                s.stop();
                long applied = BenchResults.total(poll, s.schema()) - before;
                if (applied != expected) {
                    throw new IllegalStateException(s.variant() + " c" + s.concurrency() + " applied " + applied
                            + " for " + expected + ": not exact");
                }
                if (rates != null) {
                    double rate = messages / seconds;
                    rates.computeIfAbsent(s.variant() + "|" + s.concurrency(), k -> new ArrayList<>()).add(rate);
                    System.out.printf(Locale.ROOT, "round %d %-13s concurrency %d: %,8.0f records/s (total exact)%n",
                            round + 1, s.variant(), s.concurrency(), rate);
                }
            }
        }
    }

    /** Through idemkit's idempotent producer, pipelined, each acked by the broker before the round starts. */
    static void publish(KafkaMessageTransport producer, String topic, List<String[]> stream) {
        List<CompletableFuture<Void>> acks = new ArrayList<>(stream.size());
        for (String[] m : stream) {
            acks.add(producer.publishAsync(topic, OutgoingMessage.of(m[0], m[1].getBytes(StandardCharsets.UTF_8))));
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
    }

    /** Records of {@code topic} the group has not committed. */
    static long lag(Admin admin, String group, String topic) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get();
        Map<TopicPartition, OffsetSpec> ask = new java.util.HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            ask.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        long lag = 0;
        for (var e : admin.listOffsets(ask).all().get().entrySet()) {
            OffsetAndMetadata c = committed.get(e.getKey());
            lag += e.getValue().offset() - (c == null ? 0 : c.offset());
        }
        return lag;
    }


    private static void report(int[] concurrencies, Map<String, List<Double>> rates) {
        System.out.println();
        System.out.println("| concurrency | hand-written records/s | idemkit records/s | idemkit / hand-written (per round) |");
        System.out.println("|---|---|---|---|");
        for (int c : concurrencies) {
            List<Double> hand = rates.get("hand-written|" + c);
            List<Double> idem = rates.get("idemkit|" + c);
            if (hand == null || idem == null) {
                continue;
            }
            System.out.printf(Locale.ROOT, "| %d | %,.0f | %,.0f | %s |%n", c, BenchResults.median(hand),
                    BenchResults.median(idem), BenchResults.ratios(idem, hand));
        }
        System.out.println("(records/s: medians over the rounds; every round's total was checked exact)");
        if (rates.keySet().stream().anyMatch(k -> k.startsWith("retryable-topic|"))) {
            System.out.println();
            System.out.println("| concurrency | @RetryableTopic records/s | idemkit records/s | idemkit / @RetryableTopic"
                    + " (per round) |");
            System.out.println("|---|---|---|---|");
            for (int c : concurrencies) {
                List<Double> rt = rates.get("retryable-topic|" + c);
                List<Double> idem = rates.get("idemkit|" + c);
                if (rt != null && idem != null) {
                    System.out.printf(Locale.ROOT, "| %d | %,.0f | %,.0f | %s |%n", c, BenchResults.median(rt),
                            BenchResults.median(idem), BenchResults.ratios(idem, rt));
                }
            }
        }
    }


    /**
     * One poison record (a value that is no credit: the listener throws on every attempt) at the head of partition 0,
     * the records behind it in the same partition: from the container's start, how long until the record behind it is
     * credited (how long the poison blocks its partition) and until the poison is in a dead-letter topic
     * ({@code <topic>.dlt} idemkit's, {@code <topic>-dlt} {@code @RetryableTopic}'s), waited for up to 90 s.
     */
    private static String poison(Service s, KafkaMessageTransport producer, Admin admin) throws Exception {
        String tag = Names.tag(8);
        Properties p = new Properties();
        p.put("bootstrap.servers", producer.settings().bootstrapServers());
        try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> raw =
                new org.apache.kafka.clients.producer.KafkaProducer<>(p,
                        new org.apache.kafka.common.serialization.ByteArraySerializer(),
                        new org.apache.kafka.common.serialization.ByteArraySerializer());
                java.sql.Connection poll = TestPostgres.connect()) {
            List<String[]> records = new ArrayList<>();
            records.add(new String[] {"poison-" + tag, "not-a-credit"});
            for (int i = 0; i < 20; i++) {
                records.add(new String[] {"behind-" + tag + "-" + i, "a0:1"});
            }
            for (String[] r : records) {
                var record = new org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]>(s.topic(), 0, null,
                        r[1].getBytes(StandardCharsets.UTF_8));
                record.headers().add("message_id", r[0].getBytes(StandardCharsets.UTF_8));
                raw.send(record).get();
            }
            String[] dlts = {s.topic() + ".dlt", s.topic() + "-dlt"};
            long[] dltBefore = {endOffset(admin, dlts[0]), endOffset(admin, dlts[1])};
            long before = BenchResults.total(poll, s.schema());
            long start = System.nanoTime();
            s.start();
            long deadline = start + TimeUnit.SECONDS.toNanos(90);
            double blocked = -1;
            double dead = -1;
            String where = "nowhere";
            while (System.nanoTime() < deadline && (blocked < 0 || dead < 0)) {
                double t = (System.nanoTime() - start) / 1e9;
                if (blocked < 0 && BenchResults.total(poll, s.schema()) > before) {
                    blocked = t;
                }
                for (int d = 0; d < 2 && dead < 0; d++) {
                    if (endOffset(admin, dlts[d]) > dltBefore[d]) {
                        dead = t;
                        where = dlts[d].substring(s.topic().length());
                    }
                }
                if (blocked >= 0 && dead < 0 && lag(admin, s.group(), s.topic()) == 0 && t > blocked + 10) {
                    break; // consumed and committed, and no dead letter 10 s after: it was dropped
                }
                Thread.sleep(10);
            }
            s.stop();
            String row = String.format(Locale.ROOT, "| %s | %s | %s | %s |", s.variant(),
                    dead < 0 ? "never" : String.format(Locale.ROOT, "%.2f s", dead),
                    blocked < 0 ? "more than 90 s" : String.format(Locale.ROOT, "%.2f s", blocked),
                    dead >= 0 ? "the dead-letter topic `" + where + "`"
                            : lag(admin, s.group(), s.topic()) == 0 ? "dropped: offset committed, no dead letter"
                            : "still in the topic");
            System.out.println("poison " + row);
            return row;
        }
    }

    /** The end offsets of {@code topic}'s partitions, summed; 0 when it does not exist. */
    private static long endOffset(Admin admin, String topic) throws Exception {
        try {
            var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            Map<TopicPartition, OffsetSpec> ask = new java.util.HashMap<>();
            description.partitions().forEach(i -> ask.put(new TopicPartition(topic, i.partition()),
                    OffsetSpec.latest()));
            return admin.listOffsets(ask).all().get().values().stream().mapToLong(o -> o.offset()).sum();
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                return 0;
            }
            throw e;
        }
    }
}
