package dev.idemkit.benchmarks;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Optional;

/**
 * The results of one run and the Markdown tables printed at the end: msgs/s per case and consumer
 * count, the ratios issue 13 sets targets for (single-message >= 0.9 x the hand-written consumer, batched >= 0.6 x
 * PerfTest's drain, HTTP replays >= 15,000/s with p99 <= 5 ms), whether each effect was exact, and the HTTP replays
 * beside the server's own ceiling.
 */
final class BenchReport {
    static final double SINGLE_VS_HAND_WRITTEN = 0.9;
    static final double BATCHED_VS_PERFTEST = 0.6;
    static final double HTTP_REPLAYS_PER_SECOND = 15_000;
    static final long HTTP_P99_MICROS = 5_000;
    private static final int[] CONSUMERS = {1, 4};
    private static final int JDBC = 0;
    private static final int HAND = 1;
    private static final int SINGLE = 2;
    private static final int BATCHED = 3;
    private static final int PERFTEST = 4;
    private static final int ROWS = 5;
    private static final String[] NAMES = {
        "JDBC baseline, no broker: INSERT key ON CONFLICT DO NOTHING + UPDATE, 1 tx per message",
        "hand-written consumer: RabbitMQ -> the same JDBC, 1 tx -> ack",
        "single-message: RabbitMQ -> ConsumerRuntime (runOnce: key + credit, 1 tx) -> ack",
        "batched, as serve ships it: RabbitMQ -> BatchingConsumer (runBatch: keys + the credit handler per new delivery, 1 tx per batch) -> acks after commit",
        "PerfTest drain: consume + manual ack, no effect"};

    /** One measured case: its drain, whether the effect was exact (empty: no effect), a note. */
    record Case(Drain drain, Optional<Boolean> exact, String note) {}

    private final Benchmark.Options options;
    private final boolean perfTest;
    private final Case[][] cases = new Case[ROWS][2];
    private final Workload[][] workloads = new Workload[ROWS][2];
    private HttpReplays http;

    BenchReport(Benchmark.Options options, boolean perfTest) {
        this.options = options;
        this.perfTest = perfTest;
    }

    boolean perfTest() {
        return perfTest;
    }

    void jdbc(int consumers, Workload w, Case c) {
        put(JDBC, consumers, w, c);
    }

    void handWritten(int consumers, Workload w, Case c) {
        put(HAND, consumers, w, c);
    }

    void single(int consumers, Workload w, Case c) {
        put(SINGLE, consumers, w, c);
    }

    void batched(int consumers, Workload w, Case c) {
        put(BATCHED, consumers, w, c);
    }

    void perfTest(int consumers, Workload w, Case c) {
        put(PERFTEST, consumers, w, c);
    }

    void http(HttpReplays r) {
        this.http = r;
    }

    private void put(int row, int consumers, Workload w, Case c) {
        int col = consumers == 1 ? 0 : 1;
        cases[row][col] = c;
        workloads[row][col] = w;
    }

    /** Every effect exact, every drain complete, every replay identical and one charge. */
    boolean correct() {
        for (Case[] row : cases) {
            for (Case c : row) {
                if (c != null && (!c.drain().complete() || c.exact().orElse(true) == Boolean.FALSE
                        || c.drain().acked() != c.drain().settled())) {
                    return false;
                }
            }
        }
        return http == null || (http.wrong() == 0 && http.charges() == 1);
    }

    void print(PrintWriter out, double totalSeconds) {
        out.println();
        out.printf(Locale.ROOT, "RabbitMQ -> PostgreSQL inbox + credit -> ack; prefetch %d per consumer, batch %d,"
                + " %.0f %% duplicates, %,d accounts; msgs/s over the whole drain of a pre-filled queue%n%n",
                options.prefetch(), options.batchSize(), options.duplicates() * 100, options.accounts());
        out.println("| case | consumers | messages (duplicates) | msgs/s | ratio | target | effect exact |");
        out.println("|---|---|---|---|---|---|---|");
        for (int row = 0; row < ROWS; row++) {
            for (int col = 0; col < 2; col++) {
                Case c = cases[row][col];
                if (c == null) {
                    continue;
                }
                Workload w = workloads[row][col];
                out.printf(Locale.ROOT, "| %s | %d | %,d (%,d) | %,.0f%s | %s | %s | %s |%n", NAMES[row],
                        CONSUMERS[col], w.size(), w.duplicates(), c.drain().rate(),
                        c.drain().complete() ? "" : " (INCOMPLETE: " + c.drain().settled() + " settled)",
                        ratio(row, col), target(row, col), c.exact().map(e -> e ? "yes" : "NO").orElse("-"));
            }
        }
        if (!perfTest) {
            out.println("| PerfTest drain | - | - | not run: PerfTest is not on the class path (build with -Pbench) | | | |");
        }
        for (int col = 0; col < 2; col++) {
            if (cases[BATCHED][col] != null && !cases[BATCHED][col].note().isEmpty()) {
                out.printf("%nbatched, %d consumer(s): %s", CONSUMERS[col], cases[BATCHED][col].note());
            }
        }
        out.println();
        if (http != null) {
            out.println();
            out.println("| HTTP: one stored POST /payments replayed | load | requests | requests/s | ratio | p50 | p99"
                    + " | target | not byte-identical |");
            out.println("|---|---|---|---|---|---|---|---|---|");
            HttpReplays.Run ceiling = http.runs().size() > 1 ? http.runs().get(http.runs().size() - 2) : null;
            for (HttpReplays.Run r : http.runs()) {
                boolean replays = r == http.replays();
                String ratio = ceiling == null ? "-" : String.format(Locale.ROOT, "%.2f x static", r.rate() / ceiling.rate());
                String target = replays ? verdict(r.rate() >= HTTP_REPLAYS_PER_SECOND && r.p99Micros() <= HTTP_P99_MICROS)
                        + " (>= 15,000/s, p99 <= 5 ms)" : "reference";
                out.printf(Locale.ROOT, "| %s | %s | %,d | %,.0f | %s | %.2f ms | %.2f ms | %s | %d |%n", r.what(), r.load(),
                        r.requests(), r.rate(), ratio, r.p50Micros() / 1000.0, r.p99Micros() / 1000.0, target, r.wrong());
            }
            out.printf("%ncharges on the replayed payment's account: %d (1 is correct)%n", http.charges());
        }
        out.printf(Locale.ROOT, "%nbench total %.0f s; results %s%n", totalSeconds,
                correct() ? "correct (every effect exact, every replay identical)" : "WRONG: see the table");
    }

    private double rate(int row, int col) {
        return cases[row][col] == null ? Double.NaN : cases[row][col].drain().rate();
    }

    private String ratio(int row, int col) {
        return switch (row) {
            case HAND -> String.format(Locale.ROOT, "%.2f x JDBC", rate(HAND, col) / rate(JDBC, col));
            case SINGLE -> String.format(Locale.ROOT, "%.2f x JDBC, %.2f x hand-written", rate(SINGLE, col)
                    / rate(JDBC, col), rate(SINGLE, col) / rate(HAND, col));
            case BATCHED -> (perfTest ? String.format(Locale.ROOT, "%.2f x PerfTest, ", rate(BATCHED, col)
                    / rate(PERFTEST, col)) : "") + String.format(Locale.ROOT, "%.1f x single", rate(BATCHED, col)
                    / rate(SINGLE, col));
            default -> "1.00 x";
        };
    }

    private String target(int row, int col) {
        return switch (row) {
            case SINGLE -> verdict(rate(SINGLE, col) >= SINGLE_VS_HAND_WRITTEN * rate(HAND, col))
                    + " (>= 0.9 x hand-written)";
            case BATCHED -> perfTest ? verdict(rate(BATCHED, col) >= BATCHED_VS_PERFTEST * rate(PERFTEST, col))
                    + " (>= 0.6 x PerfTest)" : "- (PerfTest not run)";
            default -> "reference";
        };
    }

    private static String verdict(boolean met) {
        return met ? "met" : "NOT met";
    }
}
