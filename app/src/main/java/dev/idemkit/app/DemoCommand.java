package dev.idemkit.app;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.AssemblyWorkbench;
import dev.idemkit.exercises.Exercises;
import dev.idemkit.exercises.Report;
import java.io.PrintWriter;
import java.nio.file.Path;
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
        PrintWriter out = out();
        Exercises.Options options = new Exercises.Options(histogram, waitDedupWindow);
        List<Report> reports;
        if (Exercises.needsWorkbench(exercises)) {
            try (Assembly assembly = assemble(settings())) {
                reports = Exercises.run(exercises, new AssemblyWorkbench(assembly), options, out);
            }
        } else {
            reports = Exercises.run(exercises, null, options, out); // exercise 4 is pure: needs no infrastructure
        }
        out.println();
        long passed = reports.stream().filter(Report::passed).count();
        out.println("idemkit demo: " + passed + " of " + reports.size() + " exercises passed");
        return passed == reports.size() ? 0 : Idemkit.EXIT_FAILED;
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
