package dev.idemkit.benchmarks;

import dev.idemkit.app.GlobalOptions;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.wiring.Assembly;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The benchmark command ({@code java -jar benchmarks/target/idemkit-benchmarks.jar}, see the README): RabbitMQ -> PostgreSQL inbox + effect -> ack, single-message and batched, at
 * 1 and 4 consumers, beside a hand-written JDBC baseline and RabbitMQ PerfTest's drain rate, plus HTTP
 * replays at 16 clients (see {@link Benchmark}). Always PostgreSQL and RabbitMQ, whatever
 * {@code --store}/{@code --transport} say; PostgreSQL defaults to the local server, never embedded. Works
 * in a schema {@code idemkit_bench_<random>} and on queues {@code idemkit-bench-<random>.*}, both removed
 * at the end.
 */
@Command(name = "idemkit-benchmarks", mixinStandardHelpOptions = true,
        description = "Benchmark RabbitMQ -> PostgreSQL inbox + effect -> ack (single and batched) beside"
                + " JDBC and PerfTest, and HTTP replays. Needs RabbitMQ and PostgreSQL.")
public final class BenchMain implements Callable<Integer> {
    @Mixin
    GlobalOptions globalOptions;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    static final String LOCAL_PG = "jdbc:postgresql://127.0.0.1:5432/test";

    @Option(names = "--messages", defaultValue = "30000", description = "messages per batched and PerfTest case (default 30000)")
    int messages;

    @Option(names = "--single-messages", defaultValue = "3000", description = "messages per single-message and JDBC case (default 3000)")
    int singleMessages;

    @Option(names = "--warmup-messages", defaultValue = "2000",
            description = "messages through each path before timing, not measured; 0: no warm-up (default 2000)")
    int warmupMessages;

    @Option(names = "--batch-size", defaultValue = "100", description = "deliveries per transaction, batched case (default 100)")
    int batchSize;

    @Option(names = "--batch-workers", defaultValue = "0",
            description = "threads running batches in the batched case; 0: as serve runs them (2) (default 0)")
    int batchWorkers;

    @Option(names = "--prefetch", description = "per consumer, at least 2 x batch size (default 5 x batch size)")
    Integer prefetch;

    @Option(names = "--duplicates", defaultValue = "0.3", description = "share of duplicates, 0..1 (default 0.3)")
    double duplicates;

    @Option(names = "--http-seconds", defaultValue = "10", description = "HTTP replay window in seconds (default 10)")
    int httpSeconds;

    @Option(names = "--http-clients", defaultValue = "16", description = "concurrent HTTP clients (default 16)")
    int httpClients;

    @Override
    public Integer call() throws Exception {
        int pf = prefetch == null ? Math.min(65_535, 5 * batchSize) : prefetch;
        if (batchWorkers < 0 || messages < 1 || singleMessages < 1 || warmupMessages < 0 || batchSize < 1 || pf < 2 * batchSize
                || duplicates < 0
                || duplicates >= 1 || httpSeconds < 1 || httpClients < 1) {
            throw new ParameterException(spec.commandLine(), "counts must be positive (--warmup-messages may be 0),"
                    + " --prefetch at least 2 x"
                    + " --batch-size, --duplicates in [0, 1)");
        }
        AppSettings configured = globalOptions.resolve(System.getenv());
        if (configured.store().kind() != AppSettings.StoreKind.POSTGRES || configured.transport().kind() != AppSettings.TransportKind.RABBIT) {
            out().println("idemkit-benchmarks always measures PostgreSQL + RabbitMQ (ignoring --store/--transport)");
        }
        AppSettings bench = Benchmark.settingsFor(configured, Benchmark.newSchema(), LOCAL_PG);
        Benchmark.Options options = new Benchmark.Options(messages, singleMessages, batchSize, Duration.ofMillis(3),
                pf, duplicates, Benchmark.Options.defaults().accounts(), Benchmark.Options.defaults().publishers(),
                httpClients, Duration.ofSeconds(httpSeconds), Benchmark.Options.defaults().drainLimit(), warmupMessages,
                batchWorkers);
        boolean correct;
        try {
            try (Assembly assembly = Assembly.start(bench)) {
                assembly.banner().forEach(line -> out().println("idemkit " + line));
                correct = new Benchmark(assembly, options, out()).run();
            }
        } finally {
            try {
                Benchmark.dropSchema(bench);
                out().println("idemkit-benchmarks dropped schema " + bench.store().postgres().schema());
            } catch (Exception e) {
                spec.commandLine().getErr().println("idemkit-benchmarks: could not drop schema " + bench.store().postgres().schema() + ": " + e);
            }
        }
        out().flush();
        return correct ? 0 : 1;
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchMain()).execute(args));
    }
}
