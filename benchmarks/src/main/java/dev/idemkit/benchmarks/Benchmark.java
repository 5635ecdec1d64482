package dev.idemkit.benchmarks;

import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.service.BatchingConsumer;
import dev.idemkit.ports.service.ConsumerSettings;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One benchmark run on an assembled PostgreSQL store and RabbitMQ (see {@link BenchReport} for what is
 * printed). Every case drains its own pre-filled queue (messages published before timing, 30 % of them
 * duplicates) and checks afterwards that the balances grew by exactly one credit per distinct message.
 * Uses its own schema and queues, and deletes the queues at the end (the caller drops the schema).
 */
public final class Benchmark {
    /** Sizes and knobs; {@link #defaults()} keeps a run under 3 minutes on a small machine. */
    public record Options(int messages, int singleMessages, int batchSize, Duration linger, int prefetch,
            double duplicates, int accounts, int publishers, int httpClients, Duration httpDuration,
            Duration drainLimit, int warmupMessages, int batchWorkers) {
        /** {@code batchWorkers} 0: as many batch workers as {@code serve} runs ({@code BatchSettings.defaults()}). */
        public static Options defaults() {
            return new Options(30_000, 3_000, 100, Duration.ofMillis(3), 500, 0.3, 10_000, 48, 16,
                    Duration.ofSeconds(10), Duration.ofSeconds(60), 2_000, 0);
        }
    }

    private final Assembly assembly;
    private final Options options;
    private final PrintWriter out;
    private final BenchDatabase db;
    private final String run;

    public Benchmark(Assembly assembly, Options options, PrintWriter out) {
        this.assembly = assembly;
        this.options = options;
        this.out = out;
        AppSettings s = assembly.settings();
        this.db = new BenchDatabase(s.store().postgres().url().orElseThrow(), s.store().postgres().user(), s.store().postgres().password(), s.store().postgres().schema());
        this.run = s.store().postgres().schema().substring(s.store().postgres().schema().lastIndexOf('_') + 1);
    }

    /** A fresh schema name, {@code idemkit_bench_<random hex>}. */
    public static String newSchema() {
        return dev.idemkit.testsupport.Names.unique("idemkit_bench");
    }

    /** The configured settings with store postgres, transport rabbit and the benchmark's schema. */
    public static AppSettings settingsFor(AppSettings s, String schema, String defaultPgUrl) {
        AppSettings.PostgresChoice pg = s.store().postgres().withSchema(schema)
                .withUrl(s.store().postgres().url().orElse(defaultPgUrl));
        return s.withStore(s.store().withKind(AppSettings.StoreKind.POSTGRES).withPostgres(pg))
                .withTransport(s.transport().withKind(AppSettings.TransportKind.RABBIT))
                .withHttp(new AppSettings.HttpSettings(0, s.http().apiKeys()));
    }

    /** Drops the benchmark's schema; the caller calls it after closing the assembly. */
    public static void dropSchema(AppSettings s) throws Exception {
        new BenchDatabase(s.store().postgres().url().orElseThrow(), s.store().postgres().user(), s.store().postgres().password(), s.store().postgres().schema()).dropSchema();
    }

    /** Runs every case and prints the report; returns false when an effect or a replay was wrong. */
    public boolean run() throws Exception {
        long began = System.nanoTime();
        db.createAccounts(options.accounts());
        BenchReport report = new BenchReport(options, PerfTestReference.available());
        String base = "idemkit-bench-" + run;
        Workload jdbc1 = workload("jdbc-1", null, options.singleMessages(), 1);
        Workload jdbc4 = workload("jdbc-4", null, options.singleMessages(), 2);
        Workload hand1 = workload("hand-1", base + ".hand-1", options.singleMessages(), 9);
        Workload hand4 = workload("hand-4", base + ".hand-4", options.singleMessages(), 10);
        Workload single1 = workload("single-1", base + ".single-1", options.singleMessages(), 3);
        Workload single4 = workload("single-4", base + ".single-4", options.singleMessages(), 4);
        Workload batch1 = workload("batch-1", base + ".batch-1", options.messages(), 5);
        Workload batch4 = workload("batch-4", base + ".batch-4", options.messages(), 6);
        List<Workload> published = new ArrayList<>(List.of(hand1, hand4, single1, single4, batch1, batch4));
        // the warm-up runs every measured path once on its own messages first, so that no case is timed while
        // the JIT is still compiling it (a 3,000-message case lasts about a second)
        int warm = options.warmupMessages();
        Workload warmJdbc = workload("warm-jdbc", null, Math.max(1, warm), 11);
        Workload warmHand = workload("warm-hand", base + ".warm-hand", Math.max(1, warm), 12);
        Workload warmSingle = workload("warm-single", base + ".warm-single", Math.max(1, warm), 13);
        Workload warmBatch = workload("warm-batch", base + ".warm-batch", Math.max(1, warm), 14);
        if (warm > 0) {
            published.addAll(List.of(warmHand, warmSingle, warmBatch));
        }
        boolean warmExact = true;
        Workload perf1 = null;
        Workload perf4 = null;
        if (report.perfTest()) {
            perf1 = workload("perftest-1", base + ".perftest-1", options.messages(), 7);
            perf4 = workload("perftest-4", base + ".perftest-4", options.messages(), 8);
            published.addAll(List.of(perf1, perf4));
        }
        try (RabbitMessageTransport t1 = transport(1, base); RabbitMessageTransport t4 = transport(4, base)) {
            try {
                long t0 = System.nanoTime();
                for (Workload w : published) {
                    t1.declare(w.queue());
                }
                Workload.publishAll(published, List.of(t1, t4, assembly.transport()), options.publishers());
                out.printf(Locale.ROOT, "bench published %,d messages to %d queues in %.1f s (not measured below)%n",
                        published.stream().mapToLong(Workload::size).sum(), published.size(),
                        (System.nanoTime() - t0) / 1e9);
                if (warm > 0) {
                    long w0 = System.nanoTime();
                    warmExact = List.of(jdbc(warmJdbc, 1), handWritten(t1, warmHand), single(t1, warmSingle),
                            batched(t1, warmBatch, 1)).stream().allMatch(c -> c.exact().orElse(true));
                    out.printf(Locale.ROOT, "bench warm-up: %,d messages through each path in %.1f s (not measured)%s%n",
                            warm, (System.nanoTime() - w0) / 1e9, warmExact ? "" : "; an effect was NOT exact");
                }
                // the cases compared with each other run next to each other, so that a change of load on a
                // shared machine skews a ratio less
                report.jdbc(1, jdbc1, jdbc(jdbc1, 1));
                report.handWritten(1, hand1, handWritten(t1, hand1));
                report.single(1, single1, single(t1, single1));
                report.batched(1, batch1, batched(t1, batch1, 1));
                if (report.perfTest()) {
                    report.perfTest(1, perf1, perfTest(t1, perf1, 1));
                }
                report.jdbc(4, jdbc4, jdbc(jdbc4, 4));
                report.handWritten(4, hand4, handWritten(t4, hand4));
                report.single(4, single4, single(t4, single4));
                report.batched(4, batch4, batched(t4, batch4, 4));
                if (report.perfTest()) {
                    report.perfTest(4, perf4, perfTest(t4, perf4, 4));
                }
                out.printf(Locale.ROOT, "bench HTTP: %d clients replaying one stored POST /payments for %d s%n",
                        options.httpClients(), options.httpDuration().toSeconds());
                report.http(HttpReplays.run(assembly.paymentCharger(), assembly.store().ledger(), assembly.metrics(),
                        options.httpClients(), options.httpDuration()));
            } finally {
                for (Workload w : published) {
                    t1.deleteTopology(w.queue());
                }
            }
        }
        report.print(out, (System.nanoTime() - began) / 1e9);
        return report.correct() && warmExact;
    }

    private Workload workload(String label, String queue, int count, long seed) {
        return Workload.credits(label, queue, "bench-" + run + "-" + label, count, options.duplicates(),
                options.accounts(), seed);
    }

    private RabbitMessageTransport transport(int consumers, String base) {
        return transport(assembly.settings(), consumers, options.prefetch(), base);
    }

    /** A RabbitMQ transport with the app's options (queue type, nodes, delivery limit) as serve would use them. */
    static RabbitMessageTransport transport(AppSettings s, int consumers, int prefetch, String base) {
        return new RabbitMessageTransport(RabbitSettings.fromEnvironment(s.transport().rabbitOptions())
                .withUri(s.transport().rabbitUri()).withConsumers(consumers)
                .withPrefetch(prefetch).withMaxAttemptsHint(s.retry().maxAttempts()), Clock.system(),
                base + "-c" + consumers);
    }

    /** The batched credit consumer as {@code serve} ships it (the ports' BatchingConsumer), with the run's batch knobs. */
    static BatchingConsumer<?> batchedConsumer(Assembly assembly, String consumer, int batchSize, Duration linger,
            int workers) {
        return assembly.batchedConsumer(consumer, ConsumerKind.CREDIT_ACCOUNT, BatchingConsumer.BatchSettings.defaults()
                .withMaxBatch(batchSize).withLinger(linger).withWorkers(workers));
    }

    /** What a batched drain did per batch, for the report. */
    static String batchNote(BatchingConsumer<?> handler, int workers) {
        long n = Math.max(1, handler.batches());
        return String.format(Locale.ROOT, "%d batches on %d workers, %.0f deliveries per batch, %d via the"
                + " single-message path; per batch %.2f ms in runBatch (keys + effects + commit), %.2f ms settling"
                + " (acks)", handler.batches(), workers,
                (double) handler.batched() / n, handler.viaSingle(), handler.batchTime().toNanos() / 1e6 / n,
                handler.settleTime().toNanos() / 1e6 / n);
    }

    private BenchReport.Case jdbc(Workload w, int threads) throws Exception {
        BigDecimal before = db.sumOfBalances();
        double seconds = db.baseline("bench-" + w.label(), w.messages(), threads);
        return new BenchReport.Case(new Drain(w.size(), w.size(), seconds, true), exact(w, before), "");
    }

    private BenchReport.Case handWritten(RabbitMessageTransport t, Workload w) throws Exception {
        BigDecimal before = db.sumOfBalances();
        Drain d;
        try (HandWrittenConsumer consumer = new HandWrittenConsumer(db, "bench-" + w.label())) {
            d = Drain.run(t, w.queue(), consumer, w.size(), options.drainLimit());
        }
        return new BenchReport.Case(d, exact(w, before), "");
    }

    private BenchReport.Case single(RabbitMessageTransport t, Workload w) throws Exception {
        BigDecimal before = db.sumOfBalances();
        DeliveryHandler runtime = assembly.consumer("bench-" + w.label(), ConsumerKind.CREDIT_ACCOUNT);
        Drain d = Drain.run(t, w.queue(), runtime, w.size(), options.drainLimit());
        return new BenchReport.Case(d, exact(w, before), "");
    }

    /** The batched path as {@code serve} ships it: the ports' BatchingConsumer on the app's credit consumer. */
    private BenchReport.Case batched(RabbitMessageTransport t, Workload w, int consumers) throws Exception {
        BigDecimal before = db.sumOfBalances();
        String consumer = "bench-" + w.label();
        BatchingConsumer<?> handler = batchedConsumer(assembly, consumer, options.batchSize(), options.linger(),
                batchWorkers());
        Drain d;
        try {
            d = Drain.run(t, w.queue(), handler, w.size(), options.drainLimit());
        } finally {
            handler.close();
        }
        return new BenchReport.Case(d, exact(w, before), batchNote(handler, batchWorkers()));
    }

    private int batchWorkers() {
        return options.batchWorkers() > 0 ? options.batchWorkers() : BatchingConsumer.BatchSettings.defaults().workers();
    }

    private BenchReport.Case perfTest(RabbitMessageTransport t, Workload w, int consumers) throws Exception {
        double seconds = PerfTestReference.drain(assembly.settings().transport().rabbitUri(), w.queue(), consumers,
                options.prefetch(), (int) options.drainLimit().toSeconds());
        return new BenchReport.Case(new Drain(w.size(), w.size(), seconds, true), Optional.empty(), "");
    }

    /** Whether the balances grew by exactly the workload's credits since {@code before}. */
    private Optional<Boolean> exact(Workload w, BigDecimal before) throws Exception {
        return Optional.of(db.sumOfBalances().subtract(before).compareTo(w.expectedCredit()) == 0);
    }
}
