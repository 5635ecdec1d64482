package dev.idemkit.exercises;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The source document's five exercises, in order, each printing its criteria as PASS or FAIL with what was
 * measured. Exercise 4 is pure (a simulated retry storm) and needs no workbench.
 */
public final class Exercises {
    /** How the exercises run: where exercise 4 writes its chart, whether exercise 3 waits the real window. */
    public record Options(Path histogram, boolean waitDedupWindow) {}

    private Exercises() {}

    /** Whether {@code exercises} needs a running idemkit (only exercise 4 does not). */
    public static boolean needsWorkbench(List<Integer> exercises) {
        return !exercises.equals(List.of(4));
    }

    /**
     * Runs {@code exercises} (numbers 1 to 5) on {@code bench}, which may be null when {@link #needsWorkbench} says
     * so, printing each report to {@code out}.
     */
    public static List<Report> run(List<Integer> exercises, Workbench bench, Options options, PrintWriter out)
            throws Exception {
        List<Report> reports = new ArrayList<>();
        for (int n : exercises) {
            out.println();
            Report report = switch (n) {
                case 1 -> new Exercise1(bench).run(out);
                case 2 -> new Exercise2(bench).run(out);
                case 3 -> new Exercise3(bench, options.waitDedupWindow()).run(out);
                case 4 -> new Exercise4(options.histogram(), 4L).run(out);
                case 5 -> new Exercise5(bench).run(out);
                default -> throw new IllegalArgumentException("no exercise " + n + "; the exercises are 1 to 5");
            };
            report.print(out);
            reports.add(report);
        }
        return reports;
    }
}
