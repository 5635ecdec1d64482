package dev.idemkit.app;

import dev.idemkit.app.exercises.Exercise1;
import dev.idemkit.app.exercises.Exercise2;
import dev.idemkit.app.exercises.Exercise3;
import dev.idemkit.app.exercises.Exercise4;
import dev.idemkit.app.exercises.Report;
import dev.idemkit.app.exercises.Exercise5;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.TransportBinding;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idemkit demo [1-5|all]}: the source document's exercises, end to end, each criterion PASS or FAIL. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the source document's exercises end to end and print PASS/FAIL per criterion.")
final class DemoCommand extends AppCommand {
    @Parameters(index = "0", defaultValue = "all", paramLabel = "1-5|all", description = "which exercise (default all)")
    String which;

    @Option(names = "--histogram", paramLabel = "FILE", defaultValue = "retry-histogram.png",
            description = "where exercise 4 writes its PNG (default retry-histogram.png)")
    Path histogram;

    @Option(names = "--wait-dedup-window", description = "exercise 3: wait the real 5 minutes instead of moving the"
            + " embedded SQS server's clock")
    boolean waitDedupWindow;

    @Override
    public Integer call() throws Exception {
        List<Integer> exercises = parse(which);
        AppSettings settings = settings();
        PrintWriter out = out();
        List<Report> reports = new ArrayList<>();
        if (exercises.equals(List.of(4))) {
            reports.add(new Exercise4(histogram, 4L).run(out)); // pure: needs no infrastructure
        } else {
            try (Assembly assembly = assemble(settings)) {
                for (int n : exercises) {
                    out.println();
                    reports.add(run(n, assembly, out));
                    reports.get(reports.size() - 1).print(out);
                }
            }
        }
        if (exercises.equals(List.of(4))) {
            reports.get(0).print(out);
        }
        out.println();
        long passed = reports.stream().filter(Report::passed).count();
        out.println("idemkit demo: " + passed + " of " + reports.size() + " exercises passed");
        return passed == reports.size() ? 0 : Idemkit.EXIT_FAILED;
    }

    private Report run(int n, Assembly assembly, PrintWriter out) throws Exception {
        return switch (n) {
            case 1 -> new Exercise1(assembly).run(out);
            case 2 -> new Exercise2(assembly.paymentCharger(), assembly.store().ledger(), assembly.metrics()).run(out);
            case 3 -> {
                TransportBinding sqs = assembly.sqsBinding();
                try {
                    yield new Exercise3(sqs, assembly.engines(), waitDedupWindow).run(out);
                } finally {
                    if (sqs != assembly.transportBinding()) {
                        sqs.close();
                    }
                }
            }
            case 4 -> new Exercise4(histogram, 4L).run(out);
            case 5 -> new Exercise5(assembly).run(out);
            default -> throw new IllegalStateException("no exercise " + n);
        };
    }

    private List<Integer> parse(String w) {
        if (w.equalsIgnoreCase("all")) {
            return List.of(1, 2, 3, 4, 5);
        }
        try {
            int n = Integer.parseInt(w);
            if (n >= 1 && n <= 5) {
                return List.of(n);
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "exercise must be 1, 2, 3, 4, 5 or all, got '" + w + "'");
    }
}
