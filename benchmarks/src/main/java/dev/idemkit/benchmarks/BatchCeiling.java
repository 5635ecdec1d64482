package dev.idemkit.benchmarks;

import dev.idemkit.adapters.postgres.InboxBatchSql;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.PostgresEffects;
import dev.idemkit.ports.service.BatchingConsumer;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the batched consumer's time goes, and this machine's ceiling for its statements (issue 30 item 4).
 *
 * <ol>
 *   <li>The batched path as {@code serve} ships it (RabbitMQ -> the ports' BatchingConsumer -> PostgreSQL inbox +
 *       credit, acks after the commit), at 1 and 4 consumer channels, with 30 % duplicates, profiled three ways at
 *       once: PostgreSQL's own view ({@code pg_stat_statements} per statement, {@code pg_stat_wal} for WAL and fsync
 *       time), CPU per message of the broker, PostgreSQL and this JVM ({@link CpuMeter}), and this JVM's CPU samples
 *       (JFR, {@link JfrProfile}).</li>
 *   <li>The ceiling: pgbench running the same three statements with the same batch (100 keys, 30 of them already
 *       there; 70 credits over 10,000 accounts in account order), in prepared mode, at 2 clients (the batch workers
 *       {@code serve} runs) and 4: alone, and beside the broker delivering and taking acks at the rate the shipped
 *       path reached (a raw amqp-client consumer draining a pre-filled queue at that pace).</li>
 * </ol>
 *
 * <p>PostgreSQL is a private server started for the run ({@link ProfilingPostgres}: pg_stat_statements needs to be
 * preloaded, which the machine's server must not be restarted for), on the server's default settings like the
 * machine's; {@code -Dbench.pgUrl=jdbc:postgresql://...} uses another one instead (without pg_stat_statements there,
 * the per-statement table is left out). Everything runs in a fresh schema, dropped at the end.
 *
 * <pre>
 * ./mvnw -q -B -pl benchmarks compile exec:java -Dexec.mainClass=dev.idemkit.benchmarks.BatchCeiling
 * </pre>
 * Options: {@code -Dbench.messages=60000} per shipped case, {@code -Dbench.warmup=20000} messages through the path
 * before, {@code -Dbench.pgbenchSeconds=10}, {@code -Dbench.consumers=1,4}, {@code -Dbench.clients=2,4} (empty: no
 * pgbench), {@code -Dbench.jfr=false} (no JFR samples).
 */
public final class BatchCeiling {
    private static final int BATCH = 100;
    private static final int ACCOUNTS = 10_000;
    private static final int NEW_PER_BATCH = 70;
    private static final CpuMeter CPU = new CpuMeter();
    private static final boolean JFR = Boolean.parseBoolean(System.getProperty("bench.jfr", "true"));

    private BatchCeiling() {}

    public static void main(String[] args) throws Exception {
        int messages = Integer.getInteger("bench.messages", 60_000);
        int seconds = Integer.getInteger("bench.pgbenchSeconds", 10);
        List<Integer> consumers = ints(System.getProperty("bench.consumers", "1,4"));
        List<Integer> clients = ints(System.getProperty("bench.clients", "2,4"));
        String given = System.getProperty("bench.pgUrl");
        if (given == null && !ProfilingPostgres.available()) {
            throw new IllegalStateException("initdb and pg_ctl are not on the PATH: pass -Dbench.pgUrl=jdbc:postgresql://...");
        }
        long began = System.nanoTime();
        List<String> out = new ArrayList<>();
        try (ProfilingPostgres own = given == null ? ProfilingPostgres.start() : null) {
            String url = given != null ? given : own.url();
            String schema = Benchmark.newSchema();
            AppSettings settings = AppSettings.resolve(new Sources(Map.of("store", "postgres", "pg.url", url,
                    "pg.schema", schema, "transport", "rabbit", "http.port", "0"), System.getenv(), new Properties()));
            BenchDatabase db = new BenchDatabase(url, settings.store().postgres().user(),
                    settings.store().postgres().password(), schema);
            try (Assembly assembly = Assembly.start(settings)) {
                db.createAccounts(ACCOUNTS);
                PgStats stats = new PgStats(url, schema);
                out.add(String.format(Locale.ROOT, "PostgreSQL %s (%s), schema %s; RabbitMQ %s; %d cores",
                        given == null ? "private server on port " + own.port() : url,
                        stats.perStatement() ? "pg_stat_statements on" : "no pg_stat_statements: WAL view only",
                        schema, AppSettings.redact(settings.transport().rabbitUri()),
                        Runtime.getRuntime().availableProcessors()));
                String base = "idemkit-ceiling-" + schema.substring(schema.lastIndexOf('_') + 1);
                double best = 0;
                shipped(assembly, db, stats, base + ".warm", Integer.getInteger("bench.warmup", 20_000), 1, 99, new ArrayList<>());
                for (int i = 0; i < consumers.size(); i++) { // a queue and message ids of its own per case
                    int c = consumers.get(i);
                    best = Math.max(best, shipped(assembly, db, stats, base + ".r" + i + "c" + c, messages, c, c, out));
                }
                ceiling(settings, db, stats, url, schema, base, clients, seconds, best, out);
            } finally {
                db.dropSchema();
            }
        }
        out.add(String.format(Locale.ROOT, "whole run %.0f s", (System.nanoTime() - began) / 1e9));
        out.forEach(System.out::println);
    }

    /** One drain of the shipped batched path, profiled; returns its rate (messages settled per second). */
    private static double shipped(Assembly assembly, BenchDatabase db, PgStats stats, String queue, int messages,
            int consumers, long seed, List<String> out) throws Exception {
        Workload w = Workload.credits(queue, queue, queue, messages, 0.3, ACCOUNTS, seed);
        int workers = BatchingConsumer.BatchSettings.defaults().workers();
        try (RabbitMessageTransport t = Benchmark.transport(assembly.settings(), consumers, 5 * BATCH, queue)) {
            t.declare(w.queue());
            try {
                Workload.publishAll(List.of(w), List.of(t), 8);
                BigDecimal before = db.sumOfBalances();
                PgStats.Snapshot s0 = stats.snapshot();
                CpuMeter.Reading c0 = CPU.read();
                Map<String, double[]> threads0 = CPU.jvmThreads();
                BatchingConsumer<?> handler = Benchmark.batchedConsumer(assembly, "ceiling-" + queue, BATCH,
                        Duration.ofMillis(3), workers);
                Map.Entry<Drain, JfrProfile.Summary> run;
                try {
                    java.util.concurrent.Callable<Drain> drain = () -> Drain.run(t, w.queue(), handler, w.size(),
                            Duration.ofMinutes(3));
                    run = JFR ? JfrProfile.record(drain) : Map.entry(drain.call(), JfrProfile.none());
                } finally {
                    handler.close();
                }
                CpuMeter.Spent cpu = CPU.read().since(c0, w.size());
                String threads = CpuMeter.threadsPerMessage(threads0, CPU.jvmThreads(), w.size(), 8);
                PgStats.settle();
                PgStats.Delta d = PgStats.between(s0, stats.snapshot());
                Drain drain = run.getKey();
                boolean exact = db.sumOfBalances().subtract(before).compareTo(w.expectedCredit()) == 0;
                if (!drain.complete() || !exact) {
                    throw new IllegalStateException(queue + ": drained " + drain.settled() + " of " + w.size()
                            + ", effect exact: " + exact);
                }
                long batches = Math.max(1, handler.batches());
                out.add("");
                out.add(String.format(Locale.ROOT, "## Shipped batched path, %d consumer channel(s), %d batch workers:"
                        + " %,.0f msg/s (%,d messages, 30 %% duplicates, effect exact)", consumers, workers,
                        drain.rate(), w.size()));
                out.add(Benchmark.batchNote(handler, workers));
                out.add(String.format(Locale.ROOT, "CPU per message (broker / postgres / JVM): %s; the machine's cores"
                        + " busy: %.2f of %d", cpu.perMessage(), cpu.machineCoresBusy(),
                        Runtime.getRuntime().availableProcessors()));
                out.add("JVM CPU per message by thread (user+kernel): " + threads);
                out.addAll(walLines(d, batches, drain.seconds()));
                out.add("table scans: " + d.scans());
                if (stats.perStatement()) {
                    out.add(String.format(Locale.ROOT, "PostgreSQL executed statements for %.2f ms per batch (%.0f %% of"
                            + " the wall time of %d workers)", d.totalExecMs() / batches,
                            100 * d.totalExecMs() / (drain.seconds() * 1000 * workers), workers));
                    out.addAll(PgStats.table(d, batches, "batch"));
                }
                out.addAll(run.getValue().lines(8));
                return drain.rate();
            } finally {
                t.deleteTopology(w.queue());
            }
        }
    }

    private static List<String> walLines(PgStats.Delta d, long batches, double seconds) {
        PgStats.Wal wal = d.wal();
        return List.of(String.format(Locale.ROOT, "WAL: %,.0f bytes and %.1f records per batch, %,.1f MB/s; %,d fsyncs"
                + " (%.2f per batch), %.3f ms each, %.0f %% of the wall time in WAL fsync", (double) wal.bytes() / batches,
                (double) wal.records() / batches, wal.bytes() / 1e6 / seconds, wal.syncs(),
                (double) wal.syncs() / batches, wal.syncs() == 0 ? 0 : wal.syncMs() / wal.syncs(),
                100 * wal.syncMs() / (seconds * 1000)));
    }

    /** pgbench on the same statements: alone, then beside the broker at {@code rate}. */
    private static void ceiling(AppSettings settings, BenchDatabase db, PgStats stats, String url, String schema,
            String base, List<Integer> clients, int seconds, double rate, List<String> out) throws Exception {
        if (clients.isEmpty()) {
            return;
        }
        if (!dev.idemkit.testsupport.Processes.onPath("pgbench")) {
            out.add("(pgbench is not on the PATH: no ceiling measured)");
            return;
        }
        db.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint)"
                + " SELECT 'pgbench', 'dup-' || g, md5(g::text) FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        Path script = Files.createTempFile("idemkit-ceiling-", ".sql");
        try {
            Files.writeString(script, pgbenchScript());
            out.add("");
            out.add(String.format(Locale.ROOT, "## The ceiling: pgbench, the same three statements per transaction, %d"
                    + " keys (30 already there) and %d credits, -M prepared, %d s per row", BATCH, NEW_PER_BATCH,
                    seconds));
            out.add("| pgbench clients | beside the broker at " + String.format(Locale.ROOT, "%,.0f", rate)
                    + " msg/s | batches/s | msg/s (x 100) | ms per batch | CPU per message (broker / postgres / JVM)"
                    + " | postgres CPU per batch | machine's cores busy | WAL fsyncs per batch |");
            out.add("|---|---|---|---|---|---|---|---|---|");
            List<String> scans = new ArrayList<>();
            for (int c : clients) {
                for (boolean beside : new boolean[] {false, true}) {
                    BrokerLoad load = beside ? BrokerLoad.start(settings.transport().rabbitUri(), base + ".load-" + c,
                            rate, seconds + 3) : null;
                    try {
                        PgStats.Snapshot s0 = stats.snapshot();
                        CpuMeter.Reading c0 = CPU.read();
                        double tps = pgbench(url, schema, script, c, seconds);
                        Thread.sleep(500); // pgbench's backends exit with it: their time counts once they are reaped
                        long batches = Math.round(tps * seconds);
                        CpuMeter.Spent cpu = CPU.read().since(c0, batches * BATCH);
                        long delivered = load == null ? 0 : load.delivered();
                        if (load != null) {
                            load.close();
                        }
                        PgStats.settle();
                        PgStats.Delta d = PgStats.between(s0, stats.snapshot());
                        scans.add(c + " clients" + (load == null ? "" : " beside the broker") + ": " + d.scans());
                        out.add(String.format(Locale.ROOT, "| %d | %s | %,.0f | %,.0f | %.2f | %s | %.0f µs | %.2f | %.2f |", c,
                                load == null ? "no" : String.format(Locale.ROOT, "yes (%,.0f msg/s delivered)",
                                        delivered / cpu.wallSeconds()), tps, tps * BATCH, c * 1000.0 / tps,
                                cpu.perMessage(), cpu.seconds().get("postgres") * 1e6 / Math.max(1, batches),
                                cpu.machineCoresBusy(), (double) d.wal().syncs() / Math.max(1, batches)));
                    } finally {
                        if (load != null) {
                            load.close();
                        }
                    }
                }
            }
            out.add("table scans: " + String.join(" | ", scans));
        } finally {
            Files.deleteIfExists(script);
        }
    }

    /**
     * The shipped statements ({@link InboxBatchSql}, {@link PostgresEffects#CREDIT_MANY}) with their array parameters
     * built in SQL: 70 new keys and 30 that are there, the fingerprints of those 30, 70 credits in account order.
     */
    static String pgbenchScript() {
        String newAndOld = "array(SELECT CASE WHEN g <= " + NEW_PER_BATCH + " THEN 'new-' || :b::bigint || '-' || g"
                + " ELSE 'dup-' || ((:d::int + g) % " + ACCOUNTS + ") END FROM generate_series(1, " + BATCH + ") g)";
        String old = "array(SELECT 'dup-' || ((:d::int + g) % " + ACCOUNTS + ") FROM generate_series(" + (NEW_PER_BATCH + 1)
                + ", " + BATCH + ") g)";
        String accounts = "array(SELECT 'bench-acc-' || ((:a::int + g * 97) % " + ACCOUNTS + ") FROM generate_series(1, "
                + NEW_PER_BATCH + ") g ORDER BY 1)";
        return String.join("\n",
                "\\set b random(1, 9000000000000000000)",
                "\\set d random(0, " + (ACCOUNTS - 1) + ")",
                "\\set a random(0, " + (ACCOUNTS - 1) + ")",
                "BEGIN;",
                bind(InboxBatchSql.INSERT_KEYS, "array_fill('pgbench'::text, ARRAY[" + BATCH + "])", newAndOld,
                        "array(SELECT md5(g::text) FROM generate_series(1, " + BATCH + ") g)") + ";",
                bind(InboxBatchSql.SELECT_FINGERPRINTS, "array_fill('pgbench'::text, ARRAY[" + (BATCH - NEW_PER_BATCH)
                        + "])", old) + ";",
                bind(PostgresEffects.CREDIT_MANY, accounts, "array_fill(1.00::numeric, ARRAY[" + NEW_PER_BATCH + "])") + ";",
                "COMMIT;", "");
    }

    /** {@code sql} with each {@code ?} replaced, in order, by an expression (in parentheses, so its cast still applies). */
    static String bind(String sql, String... expressions) {
        StringBuilder b = new StringBuilder();
        int next = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') {
                if (next >= expressions.length) {
                    throw new IllegalArgumentException("more parameters than expressions in " + sql);
                }
                b.append('(').append(expressions[next++]).append(')');
            } else {
                b.append(ch);
            }
        }
        if (next != expressions.length) {
            throw new IllegalArgumentException("fewer parameters (" + next + ") than expressions in " + sql);
        }
        return b.toString().replaceAll("\\s+", " ").trim();
    }

    private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)");

    private static double pgbench(String url, String schema, Path script, int clients, int seconds) throws Exception {
        Matcher hostPort = Pattern.compile("//([^:/]+):(\\d+)/([^?]+)").matcher(url);
        if (!hostPort.find()) {
            throw new IllegalArgumentException("cannot read host, port and database from " + url);
        }
        String output = dev.idemkit.testsupport.Processes.run(Map.of("PGOPTIONS", "-c search_path=" + schema),
                List.of("pgbench", "-h", hostPort.group(1), "-p", hostPort.group(2), "-U", "postgres", "-n",
                        "-M", "prepared", "-c", Integer.toString(clients), "-j", Integer.toString(clients),
                        "-T", Integer.toString(seconds), "-f", script.toString(), hostPort.group(3)));
        Matcher m = TPS.matcher(output);
        if (!m.find() || output.contains("failed: ") && !output.contains("failed: 0 ")) {
            throw new IllegalStateException("pgbench did not report a clean run:\n" + output);
        }
        return Double.parseDouble(m.group(1));
    }

    private static List<Integer> ints(String csv) {
        List<Integer> out = new ArrayList<>();
        for (String p : csv.split(",")) {
            if (!p.isBlank()) {
                out.add(Integer.parseInt(p.trim()));
            }
        }
        return out;
    }

    /**
     * The broker's share of the shipped path without its database: a queue pre-filled with credits, drained by one raw
     * consumer channel (prefetch 500) at {@code rate}, acking every 100 deliveries at once (as the batched path's bulk
     * ack does), on its own thread; the queue is deleted by {@link #close()}.
     */
    private static final class BrokerLoad implements AutoCloseable {
        private final com.rabbitmq.client.Connection connection;
        private final String queue;
        private final AtomicLong delivered = new AtomicLong();
        private final AtomicBoolean closed = new AtomicBoolean();

        private BrokerLoad(com.rabbitmq.client.Connection connection, String queue) {
            this.connection = connection;
            this.queue = queue;
        }

        static BrokerLoad start(URI broker, String queue, double rate, int seconds) throws Exception {
            com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
            f.setUri(broker);
            com.rabbitmq.client.Connection conn = f.newConnection("idemkit-ceiling-load");
            BrokerLoad load = new BrokerLoad(conn, queue);
            try {
                com.rabbitmq.client.Channel pub = conn.createChannel();
                pub.queueDeclare(queue, false, false, false, null);
                pub.confirmSelect();
                byte[] body = new AccountCredit(Workload.account(1), Workload.AMOUNT).toJson();
                long total = (long) (rate * seconds);
                com.rabbitmq.client.AMQP.BasicProperties props = new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                        .deliveryMode(2).build();
                for (long i = 0; i < total; i++) {
                    pub.basicPublish("", queue, props, body);
                    if (i % 1000 == 999) {
                        pub.waitForConfirmsOrDie(30_000);
                    }
                }
                pub.waitForConfirmsOrDie(30_000);
                pub.close();
                com.rabbitmq.client.Channel ch = conn.createChannel();
                ch.basicQos(5 * BATCH);
                long began = System.nanoTime();
                ch.basicConsume(queue, false, (tag, delivery) -> {
                    long n = load.delivered.incrementAndGet();
                    if (n % BATCH == 0) {
                        ch.basicAck(delivery.getEnvelope().getDeliveryTag(), true);
                    }
                    long due = began + (long) (n * 1e9 / rate);
                    long ahead = due - System.nanoTime();
                    if (ahead > 0 && !load.closed.get()) {
                        try {
                            Thread.sleep(ahead / 1_000_000, (int) (ahead % 1_000_000));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }, tag -> { });
                return load;
            } catch (Exception e) {
                load.close();
                throw e;
            }
        }

        long delivered() {
            return delivered.get();
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            try (com.rabbitmq.client.Channel ch = connection.createChannel()) {
                ch.queueDelete(queue);
            } catch (Exception e) {
                System.err.println("could not delete " + queue + ": " + e.getMessage());
            }
            try {
                connection.close();
            } catch (Exception e) {
                // closing after a failure
            }
        }
    }
}
