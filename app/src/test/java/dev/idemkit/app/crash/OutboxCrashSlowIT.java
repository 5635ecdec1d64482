package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The outbox relay's crash points with {@value #KILLS} SIGKILLs each (runs of {@value #KILLS_PER_RUN}); the full tier
 * ({@code ./mvnw -B -T 2 verify -Pfull}). Prints one line per run and the totals.
 */
@Tag("slow")
class OutboxCrashSlowIT {
    private static final int KILLS = Integer.getInteger("idemkit.crash.kills", 20);
    private static final int KILLS_PER_RUN = 4;

    @ParameterizedTest(name = "relay killed at {0}")
    @EnumSource(value = CrashPoint.class, names = {"OUTBOX_BEFORE_PUBLISH", "OUTBOX_PUBLISHED_BEFORE_MARK",
            "OUTBOX_PIPELINE_IN_FLIGHT", "OUTBOX_RECORDED_BEFORE_COMMIT"})
    void nothingIsLostOrAppliedTwiceAcrossManyKills(CrashPoint point) throws Exception {
        List<OutboxCrashHarness.Report> reports = new ArrayList<>();
        try (OutboxCrashHarness harness = new OutboxCrashHarness()) {
            for (int run = 0; run * KILLS_PER_RUN < KILLS; run++) {
                OutboxCrashHarness.Report r = harness.run(point, KILLS_PER_RUN, 1000L * run + point.ordinal(), "relay");
                System.out.println("outbox-crash " + r);
                reports.add(r);
            }
        }
        int kills = reports.stream().mapToInt(OutboxCrashHarness.Report::kills).sum();
        System.out.println("outbox-crash " + point + " total: runs=" + reports.size() + " kills=" + kills + " rows="
                + reports.stream().mapToInt(OutboxCrashHarness.Report::rows).sum() + " lost="
                + reports.stream().mapToInt(OutboxCrashHarness.Report::lost).sum() + " duplicated="
                + reports.stream().mapToInt(OutboxCrashHarness.Report::duplicated).sum() + " republished-and-absorbed="
                + reports.stream().mapToInt(OutboxCrashHarness.Report::redeliveries).sum());
        reports.forEach(OutboxCrashIT::assertExact);
        assertThat(kills).as("kills that landed").isGreaterThanOrEqualTo(KILLS);
    }
}
