package dev.idemkit.benchmarks;

import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.service.BatchingConsumer;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The peers suite (issue 33): idemkit's consumer as {@code serve} ships it (the app's credit consumer on the PostgreSQL
 * inbox and RabbitMQ: {@code idemkit} is serve's default, batches of up to 100 deliveries per transaction waiting at
 * most 3 ms, {@code idemkit-single} its {@code --batch-size 1}, one delivery per transaction as the peers do) beside
 * the libraries a user would pick instead, on one workload in one run: the same stream (30 % duplicate ids, each a
 * repeat of an earlier message with its body), one PostgreSQL schema, one broker, the same prefetch and consumer
 * count, the services interleaved round by round (the order rotates) and ratios taken within a round. Peers today:
 * Apache Camel's idempotent consumer ({@link CamelPeer}, its default and its transacted configuration).
 *
 * <p>For each service and round it reports the drain rate (deliveries ended per second, from starting the consumer
 * until every delivery was acked or dead-lettered) and correctness: credits applied twice (the balances grew by more
 * than one credit per distinct id), credits missing, and deliveries dead-lettered.
 *
 * <p>A main class, not a test: {@code ./mvnw -q -pl benchmarks exec:java
 * -Dexec.mainClass=dev.idemkit.benchmarks.PeersBenchmark}; system properties {@code bench.messages} (per service and
 * round, 3000), {@code bench.rounds} (3; a warm-up round of half the size runs first and is not reported),
 * {@code bench.concurrency} (1,4), {@code bench.duplicates} (0.3), {@code bench.prefetch} (250, Spring AMQP's
 * default), {@code bench.accounts} (10000), {@code bench.peers} (camel-default,camel-transacted); the kill comparison
 * ({@link PeerKills}, each distinct message its own account): {@code bench.kills} (3; 0 leaves it out),
 * {@code bench.kill.messages} (3000), {@code bench.kill.consumers} (4). Needs the local PostgreSQL and RabbitMQ (the
 * app's environment variables, e.g. {@code IDEMKIT_RABBIT_URI}, apply); works in a schema and queues of its own,
 * removed at the end.
 */
public final class PeersBenchmark {
    static final String IDEMKIT = "idemkit";
    static final String IDEMKIT_SINGLE = "idemkit-single";
    private static final Duration LIMIT = Duration.ofSeconds(180);

    private final Assembly assembly;
    private final BenchDatabase db;
    private final CamelPeer camel;
    private final String run;
    private final int messages = Integer.getInteger("bench.messages", 3000);
    private final int rounds = Integer.getInteger("bench.rounds", 3);
    private final double duplicates = Double.parseDouble(System.getProperty("bench.duplicates", "0.3"));
    private final int prefetch = Integer.getInteger("bench.prefetch", 250);
    private final int accounts = Integer.getInteger("bench.accounts", 10_000);
    private final int kills = Integer.getInteger("bench.kills", 3);
    private final int killMessages = Integer.getInteger("bench.kill.messages", 3000);
    private final int killConsumers = Integer.getInteger("bench.kill.consumers", 4);
    private final List<String> services;

    private PeersBenchmark(Assembly assembly, BenchDatabase db, CamelPeer camel, String run, List<String> peers) {
        this.assembly = assembly;
        this.db = db;
        this.camel = camel;
        this.run = run;
        this.services = new ArrayList<>(List.of(IDEMKIT, IDEMKIT_SINGLE));
        this.services.addAll(peers);
    }

    public static void main(String[] args) throws Exception {
        List<Integer> concurrency = Arrays.stream(System.getProperty("bench.concurrency", "1,4").split(","))
                .map(String::trim).map(Integer::valueOf).toList();
        List<String> peers = Arrays.stream(System.getProperty("bench.peers", "camel-default,camel-transacted")
                .split(",")).map(String::trim).filter(p -> !p.isEmpty()).toList();
        for (String p : peers) {
            CamelPeer.Mode.of(p);
        }
        AppSettings configured = AppSettings.resolve(new Sources(Map.of(), System.getenv(), new Properties()));
        AppSettings settings = Benchmark.settingsFor(configured, Benchmark.newSchema(), BenchMain.LOCAL_PG);
        String schema = settings.store().postgres().schema();
        boolean correct;
        try (Assembly assembly = Assembly.start(settings)) {
            AppSettings.PostgresChoice pg = settings.store().postgres();
            BenchDatabase db = new BenchDatabase(pg.url().orElseThrow(), pg.user(), pg.password(), schema);
            try (CamelPeer camel = new CamelPeer(db, settings.transport().rabbitUri(),
                    concurrency.stream().mapToInt(Integer::intValue).max().orElse(1))) {
                PeersBenchmark bench = new PeersBenchmark(assembly, db, camel,
                        schema.substring(schema.lastIndexOf('_') + 1), peers);
                correct = bench.run(concurrency);
            }
        } finally {
            Benchmark.dropSchema(settings);
            System.out.println("peers: dropped schema " + schema);
        }
        System.exit(correct ? 0 : 1);
    }

    /** One service's outcome in one round. */
    record Outcome(double rate, long twice, long missing, long deadLettered, boolean complete) {}

    private boolean run(List<Integer> concurrency) throws Exception {
        db.createAccounts(accounts);
        System.out.printf(Locale.ROOT, "peers: %,d messages per service and round (%.0f %% duplicates), %d rounds,"
                + " prefetch %d, %,d accounts, services %s%n", messages, duplicates * 100, rounds, prefetch, accounts,
                services);
        boolean idemkitCorrect = true;
        StringBuilder table = new StringBuilder();
        table.append("| consumers | service | deliveries/s (median) | idemkit / service (per round) | idemkit-single /"
                + " service (per round) | applied twice | missing | dead-lettered |\n|---|---|---|---|---|---|---|---|\n");
        for (int c : concurrency) {
            Map<String, List<Outcome>> outcomes = new LinkedHashMap<>();
            services.forEach(s -> outcomes.put(s, new ArrayList<>()));
            String base = "idemkit-bench-" + run + ".peers-c" + c;
            try (RabbitMessageTransport t = Benchmark.transport(assembly.settings(), c, prefetch, base)) {
                round(t, c, -1, Math.max(1, messages / 2)); // warm-up, not reported
                for (int r = 0; r < rounds; r++) {
                    Map<String, Outcome> round = round(t, c, r, messages);
                    round.forEach((s, o) -> outcomes.get(s).add(o));
                    System.out.printf(Locale.ROOT, "peers: c%d round %d: %s%n", c, r, round);
                }
            }
            for (Map.Entry<String, List<Outcome>> e : outcomes.entrySet()) {
                List<Outcome> os = e.getValue();
                table.append(String.format(Locale.ROOT, "| %d | %s | %,.0f | %s | %s | %d | %d | %d |%n", c,
                        e.getKey(), median(os.stream().map(Outcome::rate).toList()),
                        ratios(outcomes.get(IDEMKIT), os), ratios(outcomes.get(IDEMKIT_SINGLE), os),
                        os.stream().mapToLong(Outcome::twice).sum(), os.stream().mapToLong(Outcome::missing).sum(),
                        os.stream().mapToLong(Outcome::deadLettered).sum()));
            }
            for (String mine : List.of(IDEMKIT, IDEMKIT_SINGLE)) {
                idemkitCorrect &= outcomes.get(mine).stream().allMatch(o -> o.complete() && o.twice() == 0
                        && o.missing() == 0 && o.deadLettered() == 0);
            }
        }
        StringBuilder killTable = new StringBuilder();
        if (kills > 0) {
            killTable.append(String.format(Locale.ROOT, "%n| service | SIGKILLs | distinct credits | applied twice"
                    + " | missing | dead-lettered | left in queue | seconds |%n|---|---|---|---|---|---|---|---|%n"));
            PeerKills killer = new PeerKills(db, assembly.settings().transport().rabbitUri());
            String base = "idemkit-bench-" + run + ".peers-kill";
            try (RabbitMessageTransport t = Benchmark.transport(assembly.settings(), 1, prefetch, base)) {
                for (String s : services) {
                    String label = s + "-kill";
                    String accountPrefix = "bench-kill-" + run + "-" + s + "-";
                    Workload w = Workload.perMessage(label, "idemkit-bench-" + run + "." + label,
                            "bench-" + run + "-" + label, killMessages, duplicates, accountPrefix, 7);
                    t.declare(w.queue());
                    try {
                        Workload.publishAll(List.of(w), List.of(t), 8);
                        PeerKills.Outcome o = killer.run(s, w, accountPrefix, killConsumers, prefetch, kills);
                        System.out.printf(Locale.ROOT, "peers: kills %s: %s%n", s, o);
                        killTable.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d | %.1f |%n",
                                s, o.kills(), o.unique(), o.twice(), o.missing(), o.deadLettered(), o.left(),
                                o.seconds()));
                        if (s.equals(IDEMKIT) || s.equals(IDEMKIT_SINGLE)) {
                            idemkitCorrect &= o.twice() == 0 && o.missing() == 0 && o.deadLettered() == 0
                                    && o.left() == 0;
                        }
                    } finally {
                        t.deleteTopology(w.queue());
                    }
                }
            }
        }
        System.out.println();
        System.out.print(table);
        System.out.print(killTable);
        System.out.println(idemkitCorrect ? "peers: idemkit exact in every round and after every kill"
                : "peers: idemkit was NOT exact");
        return idemkitCorrect;
    }

    /** Publishes the round's stream to one queue per service, then drains them one after another. */
    private Map<String, Outcome> round(RabbitMessageTransport t, int c, int r, int count) throws Exception {
        List<String> order = new ArrayList<>(services);
        Collections.rotate(order, Math.max(0, r));
        Map<String, Workload> workloads = new LinkedHashMap<>();
        for (String s : order) {
            String label = s + "-c" + c + "-r" + (r < 0 ? "warm" : r);
            // the same seed for every service: the same stream, under ids of its own
            workloads.put(s, Workload.credits(label, "idemkit-bench-" + run + "." + label, "bench-" + run + "-" + label,
                    count, duplicates, accounts, 1000L * c + r + 2));
        }
        for (Workload w : workloads.values()) {
            t.declare(w.queue());
        }
        Map<String, Outcome> round = new LinkedHashMap<>();
        try {
            Workload.publishAll(List.copyOf(workloads.values()), List.of(t), 8);
            for (String s : order) {
                round.put(s, drain(t, s, workloads.get(s), c));
            }
        } finally {
            for (Workload w : workloads.values()) {
                t.deleteTopology(w.queue());
            }
        }
        return round;
    }

    private Outcome drain(RabbitMessageTransport t, String service, Workload w, int c) throws Exception {
        BigDecimal before = db.sumOfBalances();
        Drain d;
        long deadLettered;
        if (service.equals(IDEMKIT) || service.equals(IDEMKIT_SINGLE)) {
            try (Idemkit handler = Idemkit.of(service, assembly, "bench-" + w.label())) {
                d = Drain.run(t, w.queue(), handler.handler(), w.size(), LIMIT);
            }
            deadLettered = d.settled() - d.acked();
        } else {
            CamelPeer.Result result = camel.drain(CamelPeer.Mode.of(service), w.queue(), "bench-" + w.label(), c, prefetch,
                    w.size(), LIMIT);
            d = result.drain();
            deadLettered = result.rejected();
        }
        long credits = db.sumOfBalances().subtract(before).divide(Workload.AMOUNT).longValueExact();
        return new Outcome(d.rate(), Math.max(0, credits - w.unique()), Math.max(0, w.unique() - credits),
                deadLettered, d.complete());
    }

    /**
     * idemkit's credit consumer as {@code serve} builds it: {@link #IDEMKIT} its default (the ports' batching consumer,
     * {@code BatchSettings.defaults()}: up to 100 deliveries per transaction, 3 ms linger, 2 workers),
     * {@link #IDEMKIT_SINGLE} its {@code --batch-size 1} (one delivery per transaction).
     */
    record Idemkit(DeliveryHandler handler, AutoCloseable resources) implements AutoCloseable {
        static Idemkit of(String service, Assembly assembly, String consumer) {
            if (service.equals(IDEMKIT_SINGLE)) {
                return new Idemkit(assembly.consumer(consumer, ConsumerKind.CREDIT_ACCOUNT), () -> { });
            }
            BatchingConsumer<?> batching = assembly.batchedConsumer(consumer, ConsumerKind.CREDIT_ACCOUNT,
                    BatchingConsumer.BatchSettings.defaults());
            return new Idemkit(batching, batching::close);
        }

        @Override
        public void close() throws Exception {
            resources.close();
        }
    }

    /** Each round's ratio of {@code mine} to {@code theirs} ("1" for the same service). */
    private static String ratios(List<Outcome> mine, List<Outcome> theirs) {
        if (mine == theirs) {
            return "1";
        }
        List<String> out = new ArrayList<>();
        for (int r = 0; r < theirs.size(); r++) {
            out.add(String.format(Locale.ROOT, "%.2f", mine.get(r).rate() / theirs.get(r).rate()));
        }
        return String.join(", ", out);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
