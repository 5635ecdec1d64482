package dev.idemkit.benchmarks.spring;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.benchmarks.spring.handwritten.HandWrittenListenerService;
import dev.idemkit.benchmarks.spring.idemkit.IdemkitListenerService;
import dev.idemkit.benchmarks.spring.idemkitbatch.IdemkitBatchListenerService;
import dev.idemkit.benchmarks.spring.integration.SpringIntegrationService;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter's idempotent {@code @RabbitListener} beside the one a Spring user writes without idemkit
 * ({@code @Transactional}, {@code INSERT ... ON CONFLICT DO NOTHING}), with the same container settings, at each
 * concurrency, rounds interleaved in one run. Each variant is a real Spring Boot service with its own schema and queue;
 * a round publishes the same stream to each (30 % of the messages repeat an earlier id with its body), starts the
 * listener container, and times until every unique credit is in the database. Then it stops the container and checks
 * that the total is exact. Ratios are idemkit over the hand-written listener of the same round.
 *
 * <pre>./mvnw -q -pl benchmarks-spring -am install -DskipTests &amp;&amp; ./mvnw -q -pl benchmarks-spring exec:java</pre>
 * Properties: {@code bench.messages} (10000), {@code bench.rounds} (3), {@code bench.concurrency} (1,4),
 * {@code bench.prefetch} (unset: Spring's default, 250), {@code bench.duplicates} (0.3), {@code bench.batchSize} (100:
 * the batch mode, a batch listener under Spring AMQP's consumer batching, beside them; 1 leaves it out),
 * {@code bench.variants} (idemkit,hand-written,idemkit-batch,spring-integration: which services run; {@code
 * spring-integration} is the peer of issue 33, {@link SpringIntegrationService}, e.g. one alone under a profiler),
 * {@code bench.accounts} (100: the rows the credits go to; few rows make concurrent batches wait for each other).
 */
public final class SpringListenerBenchmark {
    private static final int ACCOUNTS = Integer.getInteger("bench.accounts", 100);
    private static int batchSize = Integer.getInteger("bench.batchSize", 100);

    private SpringListenerBenchmark() {
    }

    /** One Spring service of one variant at one concurrency, its schema, queue and listener container. */
    private record Service(String variant, int concurrency, String schema, String queue,
            ConfigurableApplicationContext context) {
        MessageListenerContainer container() {
            return SpringListenerBenchmark.container(context);
        }
    }

    public static void main(String[] args) throws Exception {
        int messages = Integer.getInteger("bench.messages", 10_000);
        int rounds = Integer.getInteger("bench.rounds", 3);
        double duplicates = Double.parseDouble(System.getProperty("bench.duplicates", "0.3"));
        String prefetch = System.getProperty("bench.prefetch");
        batchSize = Integer.getInteger("bench.batchSize", 100);
        List<String> variants = List.of(System.getProperty("bench.variants",
                "idemkit,hand-written,idemkit-batch,spring-integration")
                .split(","));
        int[] concurrencies = Arrays.stream(System.getProperty("bench.concurrency", "1,4").split(","))
                .map(String::trim).mapToInt(Integer::parseInt).toArray();
        List<Service> services = new ArrayList<>();
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        try (Connection rabbit = TestRabbit.rawConnection("idemkit-bench-spring-publisher")) {
            for (int c : concurrencies) {
                for (String v : List.of("idemkit", "hand-written", "spring-integration", "idemkit-batch")) {
                    if (variants.contains(v) && (batchSize > 1 || !v.equals("idemkit-batch"))) {
                        services.add(start(v, config(v), c, prefetch));
                    }
                }
            }
            System.out.printf(Locale.ROOT, "spring listener benchmark: %d messages per round (%.0f %% duplicates),"
                    + " %d rounds, prefetch %s, concurrency %s%n", messages, duplicates * 100, rounds,
                    prefetch == null ? "250 (Spring's default)" : prefetch, Arrays.toString(concurrencies));
            round(services, rabbit, Math.max(1_000, messages / 2), duplicates, -1, null); // warm-up, not reported
            for (int r = 0; r < rounds; r++) {
                round(services, rabbit, messages, duplicates, r, rates);
            }
        } finally {
            for (Service s : services) {
                s.context().close();
                TestPostgres.dropSchema(s.schema());
                deleteQueues(s.queue());
            }
        }
        report(concurrencies, rates);
    }

    private static Service start(String variant, Class<?> config, int concurrency, String prefetch) throws SQLException {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_spring");
        String queue = TestRabbit.unique("idemkit.bench.spring");
        createSchema(schema, "SELECT 'a' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        ConfigurableApplicationContext context = new SpringApplicationBuilder(config)
                .web(WebApplicationType.NONE).properties(properties(variant, concurrency, schema, queue, prefetch)
                        .toArray(String[]::new)).run();
        // the service's queue is declared by Spring's RabbitAdmin when its first connection opens, which a stopped
        // container has not done yet: declare it now, so that the stream published before the start is kept
        context.getBean(RabbitAdmin.class).initialize();
        return new Service(variant, concurrency, schema, queue, context);
    }

    /** A service's container: its {@code @RabbitListener}'s, or (Spring Integration) its inbound adapter's. */
    static MessageListenerContainer container(ConfigurableApplicationContext context) {
        MessageListenerContainer listener = context.getBean(RabbitListenerEndpointRegistry.class)
                .getListenerContainer("credits");
        return listener != null ? listener : context.getBean("creditsContainer", MessageListenerContainer.class);
    }

    /** The Spring configuration of a variant. */
    static Class<?> config(String variant) {
        return switch (variant) {
            case "idemkit" -> IdemkitListenerService.class;
            case "hand-written" -> HandWrittenListenerService.class;
            case "idemkit-batch" -> IdemkitBatchListenerService.class;
            case "spring-integration" -> SpringIntegrationService.class;
            default -> throw new IllegalArgumentException("unknown variant '" + variant + "'; known: idemkit,"
                    + " hand-written, idemkit-batch, spring-integration");
        };
    }

    /**
     * A service's schema: {@code accounts} filled by {@code accountsSelect} (id, balance), and the tables the variants
     * expect, as their authors would create them.
     */
    static void createSchema(String schema, String accountsSelect) throws SQLException {
        try (java.sql.Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
            s.execute("CREATE TABLE " + schema + ".accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
            s.execute("INSERT INTO " + schema + ".accounts " + accountsSelect);
            // the hand-written listener's dedup table, as its author would create it
            s.execute("CREATE TABLE " + schema + ".processed (message_id text PRIMARY KEY,"
                    + " processed_at timestamptz NOT NULL DEFAULT now())");
            // Spring Integration's metadata store, as its module's schema-postgresql.sql creates it
            s.execute("CREATE TABLE " + schema + ".INT_METADATA_STORE (METADATA_KEY VARCHAR(255) NOT NULL,"
                    + " METADATA_VALUE VARCHAR(4000), REGION VARCHAR(100) NOT NULL,"
                    + " constraint INT_METADATA_STORE_PK primary key (METADATA_KEY, REGION))");
        }
    }

    /**
     * The Spring properties of a variant's service: its schema and queue, the container's concurrency and prefetch
     * (every variant the same), a pool of {@code concurrency + 2} connections.
     */
    static List<String> properties(String variant, int concurrency, String schema, String queue, String prefetch) {
        URI amqp = URI.create(TestRabbit.URI);
        String url = TestPostgres.URL + (TestPostgres.URL.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        List<String> props = new ArrayList<>(List.of(
                "spring.datasource.url=" + url,
                "spring.datasource.username=" + TestPostgres.USER,
                "spring.datasource.password=" + TestPostgres.PASSWORD,
                "spring.datasource.hikari.maximum-pool-size=" + (concurrency + 2),
                "spring.rabbitmq.host=" + amqp.getHost(),
                "spring.rabbitmq.port=" + (amqp.getPort() > 0 ? amqp.getPort() : 5672),
                "spring.rabbitmq.listener.simple.concurrency=" + concurrency,
                "spring.rabbitmq.listener.simple.max-concurrency=" + concurrency,
                "bench.queue=" + queue,
                "idemkit.postgres.schema=" + schema,
                "logging.level.root=WARN", BenchResults.NO_MODULITH));
        if (prefetch != null) {
            props.add("spring.rabbitmq.listener.simple.prefetch=" + prefetch);
        }
        if (variant.equals("idemkit-batch")) {
            props.add("spring.rabbitmq.listener.simple.consumer-batch-enabled=true");
            props.add("spring.rabbitmq.listener.simple.batch-size=" + batchSize);
        }
        if (variant.startsWith("idemkit")) {
            props.add("idemkit.rabbit.idempotent-listeners=true");
        } else {
            props.add("idemkit.enabled=false");
        }
        return props;
    }

    private static void round(List<Service> services, Connection rabbit, int messages, double duplicates, int round,
            Map<String, List<Double>> rates) throws Exception {
        String tag = Names.tag(8);
        Random random = new Random(round + 17L);
        List<String[]> stream = new ArrayList<>(messages); // {id, body}
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
        for (Service s : services) {
            // one connection for the polls (a connection per poll would fork a server process every few ms)
            try (java.sql.Connection poll = TestPostgres.connect()) {
                try (Statement vacuum = poll.createStatement()) {
                    // the credits' hot rows leave dead versions behind: every run starts from a vacuumed table
                    vacuum.execute("VACUUM ANALYZE " + s.schema() + ".accounts");
                }
                long before = BenchResults.total(poll, s.schema());
                publish(rabbit, s.queue(), stream);
                long start = System.nanoTime();
                s.container().start();
                long deadline = start + TimeUnit.MINUTES.toNanos(5);
                while (BenchResults.total(poll, s.schema()) < before + expected) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(s.variant() + " c" + s.concurrency() + " did not apply the"
                                + " round's credits within 5 minutes");
                    }
                    Thread.sleep(10);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                s.container().stop();
                long applied = BenchResults.total(poll, s.schema()) - before;
                purge(rabbit, s.queue()); // duplicates the container had not reached when the last credit landed
                if (applied != expected) {
                    throw new IllegalStateException(s.variant() + " c" + s.concurrency() + " applied " + applied
                            + " for " + expected + ": not exact");
                }
                if (rates != null) {
                    double rate = messages / seconds;
                    rates.computeIfAbsent(s.variant() + "|" + s.concurrency(), k -> new ArrayList<>()).add(rate);
                    System.out.printf(Locale.ROOT, "round %d %-13s concurrency %d: %,8.0f msg/s (total exact)%n",
                            round + 1, s.variant(), s.concurrency(), rate);
                }
            }
        }
    }

    static void publish(Connection rabbit, String queue, List<String[]> stream) throws Exception {
        try (Channel ch = rabbit.createChannel()) {
            ch.confirmSelect();
            java.util.concurrent.atomic.AtomicInteger returned = new java.util.concurrent.atomic.AtomicInteger();
            ch.addReturnListener(r -> returned.incrementAndGet());
            int n = 0;
            for (String[] m : stream) {
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(m[0]).deliveryMode(2)
                        .contentType("text/plain").build();
                ch.basicPublish("", queue, true, props, m[1].getBytes(StandardCharsets.UTF_8));
                if (++n % 500 == 0) {
                    ch.waitForConfirmsOrDie(30_000);
                }
            }
            ch.waitForConfirmsOrDie(30_000);
            if (returned.get() > 0) {
                throw new IllegalStateException(returned.get() + " messages to " + queue + " were unroutable");
            }
        }
    }

    private static void purge(Connection rabbit, String queue) throws Exception {
        try (Channel ch = rabbit.createChannel()) {
            ch.queuePurge(queue);
        }
    }

    /** The queue, and the settle paths the starter declared for it (retry buckets, hold queue, DLX, DLQ). */
    static void deleteQueues(String queue) {
        try (var transport = new RabbitMessageTransport(RabbitSettings.defaults().withUri(URI.create(TestRabbit.URI)))) {
            transport.deleteTopology(queue);
        } catch (Exception e) {
            System.err.println("could not delete " + queue + " and its settle paths: " + e.getMessage());
        }
    }


    private static void report(int[] concurrencies, Map<String, List<Double>> rates) {
        System.out.println();
        boolean batch = rates.keySet().stream().anyMatch(k -> k.startsWith("idemkit-batch|"));
        System.out.println("| concurrency | hand-written msg/s | idemkit msg/s | idemkit / hand-written (per round)"
                + (batch ? " | idemkit batch msg/s | batch / idemkit single (per round)" : "") + " |");
        System.out.println("|---|---|---|---" + (batch ? "|---|---" : "") + "|");
        for (int c : concurrencies) {
            List<Double> hand = rates.get("hand-written|" + c);
            List<Double> idem = rates.get("idemkit|" + c);
            if (hand == null || idem == null) {
                continue; // a variant left out: its rounds are printed above
            }
            String line = String.format(Locale.ROOT, "| %d | %,.0f | %,.0f | %s", c, BenchResults.median(hand),
                    BenchResults.median(idem), BenchResults.ratios(idem, hand));
            if (batch) {
                List<Double> b = rates.get("idemkit-batch|" + c);
                line += String.format(Locale.ROOT, " | %,.0f | %s", BenchResults.median(b),
                        BenchResults.ratios(b, idem));
            }
            System.out.println(line + " |");
        }
        System.out.println("(msg/s: medians over the rounds; every round's total was checked exact)");
        if (rates.keySet().stream().anyMatch(k -> k.startsWith("spring-integration|"))) {
            System.out.println();
            System.out.println("| concurrency | Spring Integration msg/s | idemkit msg/s | idemkit / Spring Integration"
                    + " (per round)" + (batch ? " | idemkit batch / Spring Integration (per round)" : "") + " |");
            System.out.println("|---|---|---|---" + (batch ? "|---" : "") + "|");
            for (int c : concurrencies) {
                List<Double> si = rates.get("spring-integration|" + c);
                List<Double> idem = rates.get("idemkit|" + c);
                if (si != null && idem != null) {
                    List<Double> b = rates.get("idemkit-batch|" + c);
                    System.out.printf(Locale.ROOT, "| %d | %,.0f | %,.0f | %s%s |%n", c, BenchResults.median(si),
                            BenchResults.median(idem), BenchResults.ratios(idem, si),
                            b == null ? "" : " | " + BenchResults.ratios(b, si));
                }
            }
        }
    }
}
