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
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.stream.Stream;

/**
 * The full crash matrix (full tier; about an hour): for every combination, mode (single-message and batched) and crash point, {@value #KILLS} SIGKILLs
 * ({@value #RUNS} runs of {@value #KILLS_PER_RUN}), each run drained and counted. Writes the table of runs, kills,
 * lost and duplicated to {@code target/crash-matrix.md}. Run it with the README's command.
 */
@Tag("slow")
class CrashMatrixSlowIT {
    private static final int KILLS = Integer.getInteger("idemkit.crash.kills", 20);
    private static final int KILLS_PER_RUN = 2;
    private static final int RUNS = (KILLS + KILLS_PER_RUN - 1) / KILLS_PER_RUN;
    private static final Map<String, List<CrashHarness.Report>> RESULTS = new LinkedHashMap<>();

    /**
     * Every (combination, mode, point) the consumer has: each point of each combination single-message, and the batched
     * consumer's points; or those {@code -Didemkit.crash.only=COMBINATION[:POINT],...} names.
     */
    static Stream<Arguments> pointsAndCombinations() {
        String only = System.getProperty("idemkit.crash.only", "");
        List<String> wanted = only.isBlank() ? List.of() : List.of(only.split(","));
        List<Arguments> all = new ArrayList<>();
        for (Combination c : Combination.values()) {
            for (CrashPoint p : CrashPoint.values()) {
                if (p.appliesTo(c)) {
                    all.add(Arguments.of(c, "consume", p));
                }
            }
            for (CrashPoint p : List.of(CrashPoint.INSIDE_EFFECT, CrashPoint.AFTER_COMMIT_BEFORE_ACK)) {
                all.add(Arguments.of(c, "batched", p));
            }
        }
        return all.stream().filter(a -> wanted.isEmpty() || wanted.stream().map(String::trim).anyMatch(w ->
                w.equals(a.get()[0].toString()) || w.equals(a.get()[0] + ":" + a.get()[2])));
    }

    @ParameterizedTest(name = "{0} {1} at {2}")
    @MethodSource("pointsAndCombinations")
    void everyEffectRunsExactlyOnceAcrossManyKills(Combination combination, String mode, CrashPoint point)
            throws Exception {
        List<CrashHarness.Report> reports = new ArrayList<>();
        try (CrashHarness harness = new CrashHarness(combination)) {
            for (int run = 0; run < RUNS; run++) {
                reports.add(harness.run(point, KILLS_PER_RUN, 1000L * run + point.ordinal(), mode));
            }
        }
        RESULTS.put(combination + " | " + mode + " | " + point, reports);
        int kills = reports.stream().mapToInt(CrashHarness.Report::kills).sum();
        assertThat(reports).allSatisfy(r -> assertThat(r.exact()).as(r.toString()).isTrue());
        assertThat(kills).as("kills that landed").isGreaterThanOrEqualTo(point == CrashPoint.DURING_SHUTDOWN
                ? KILLS / 2 : KILLS);
    }

    /** The bite of {@link CrashHarnessIT} on the Redis store: a consumer that acknowledges before it commits loses. */
    @org.junit.jupiter.api.Test
    void theHarnessCatchesAConsumerThatAcknowledgesBeforeItCommitsOnRedis() throws Exception {
        try (CrashHarness harness = new CrashHarness(Combination.REDIS_RABBIT)) {
            CrashHarness.Report broken = harness.run(CrashPoint.INSIDE_EFFECT, 1, 42, "broken-ack-first");
            System.out.println("crash-harness " + broken);
            CrashHarnessIT.assertBites(broken);
        }
    }

    @AfterAll
    static void table() throws IOException {
        StringBuilder t = new StringBuilder("| combination | mode | crash point | runs | kills | lost | duplicated | unsettled |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        RESULTS.forEach((name, reports) -> t.append("| ").append(name).append(" | ").append(reports.size())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::kills).sum())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::lost).sum())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::duplicated).sum())
                .append(" | ").append(reports.stream().mapToInt(CrashHarness.Report::unsettled).sum()).append(" |\n"));
        Files.writeString(Path.of("target", "crash-matrix.md"), t);
        System.out.println(t);
    }
}
