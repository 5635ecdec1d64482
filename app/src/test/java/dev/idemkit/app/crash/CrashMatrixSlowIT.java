package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The full crash matrix (slow; about half an hour): for every combination and crash point, {@value #KILLS} SIGKILLs
 * ({@value #RUNS} runs of {@value #KILLS_PER_RUN}), each run drained and counted. Writes the table of runs, kills,
 * lost and duplicated to {@code target/crash-matrix.md}. Run it with the README's command.
 */
@Tag("slow")
class CrashMatrixSlowIT {
    private static final int KILLS = Integer.getInteger("idemkit.crash.kills", 20);
    private static final int KILLS_PER_RUN = 2;
    private static final int RUNS = (KILLS + KILLS_PER_RUN - 1) / KILLS_PER_RUN;
    private static final Map<String, List<CrashHarness.Report>> RESULTS = new LinkedHashMap<>();

    /** All of them, or those {@code -Didemkit.crash.only=COMBINATION[:POINT],...} names. */
    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> pointsAndCombinations() {
        String only = System.getProperty("idemkit.crash.only", "");
        List<String> wanted = only.isBlank() ? List.of() : List.of(only.split(","));
        return CrashHarnessIT.pointsAndCombinations().filter(a -> wanted.isEmpty() || wanted.stream().anyMatch(w ->
                w.equals(a.get()[0].toString()) || w.equals(a.get()[0] + ":" + a.get()[1])));
    }

    @ParameterizedTest(name = "{0} at {1}")
    @MethodSource("pointsAndCombinations")
    void everyEffectRunsExactlyOnceAcrossManyKills(Combination combination, CrashPoint point) throws Exception {
        List<CrashHarness.Report> reports = new ArrayList<>();
        try (CrashHarness harness = new CrashHarness(combination)) {
            for (int run = 0; run < RUNS; run++) {
                reports.add(harness.run(point, KILLS_PER_RUN, 1000L * run + point.ordinal(), "consume"));
            }
        }
        RESULTS.put(combination + " | " + point, reports);
        int kills = reports.stream().mapToInt(CrashHarness.Report::kills).sum();
        assertThat(reports).allSatisfy(r -> assertThat(r.exact()).as(r.toString()).isTrue());
        assertThat(kills).as("kills that landed").isGreaterThanOrEqualTo(point == CrashPoint.DURING_SHUTDOWN
                ? KILLS / 2 : KILLS);
    }

    @AfterAll
    static void table() throws IOException {
        StringBuilder t = new StringBuilder("| combination | crash point | runs | kills | lost | duplicated | unsettled |\n"
                + "|---|---|---|---|---|---|---|\n");
        RESULTS.forEach((name, reports) -> t.append("| ").append(name).append(" | ").append(reports.size())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::kills).sum())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::lost).sum())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::duplicated).sum())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::unsettled).sum()).append(" |\n"));
        Files.writeString(Path.of("target", "crash-matrix.md"), t);
        System.out.println(t);
    }
}
