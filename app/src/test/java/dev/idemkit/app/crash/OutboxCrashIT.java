package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The outbox relay SIGKILLed in a real child JVM at its three crash points (the third with a pipelined pass in flight,
 * several rows of one key among them), {@value #KILLS} time each in the README's
 * test command ({@link OutboxCrashSlowIT}: 20): every committed row is published and marked sent, and its effect
 * downstream runs exactly once, the first effects of each key in commit order; killed after the broker's confirm and before the mark, the row is published again with
 * the same id and the downstream inbox absorbs it. The harness bites: a relay that marks before it publishes loses rows.
 */
class OutboxCrashIT {
    private static final int KILLS = 1;
    private static final List<OutboxCrashHarness.Report> REPORTS = new ArrayList<>();

    @ParameterizedTest(name = "relay killed at {0}")
    @EnumSource(value = CrashPoint.class, names = {"OUTBOX_BEFORE_PUBLISH", "OUTBOX_PUBLISHED_BEFORE_MARK",
            "OUTBOX_PIPELINE_IN_FLIGHT", "OUTBOX_RECORDED_BEFORE_COMMIT"})
    void everyRowIsPublishedAndAppliedExactlyOnceDownstreamWhenTheRelayIsKilledThere(CrashPoint point) throws Exception {
        try (OutboxCrashHarness harness = new OutboxCrashHarness()) {
            OutboxCrashHarness.Report report = harness.run(point, KILLS, System.nanoTime(), "relay");
            REPORTS.add(report);
            assertThat(report.kills()).as("kills that landed: %s", report).isEqualTo(KILLS);
            assertExact(report);
            if (point == CrashPoint.OUTBOX_PUBLISHED_BEFORE_MARK) {
                assertThat(report.redeliveries()).as("published again with the same id, absorbed: %s", report)
                        .isGreaterThanOrEqualTo(1);
            }
        }
    }

    /** The bite, where the relay is killed before it publishes (the pipelined case is the full tier's, below). */
    @org.junit.jupiter.api.Test
    void theHarnessCatchesARelayThatMarksRowsSentBeforePublishingThem() throws Exception {
        assertBites(CrashPoint.OUTBOX_BEFORE_PUBLISH);
    }

    /** The same bite with publishes in flight (full tier: the case above shows the harness bites on the relay). */
    @org.junit.jupiter.api.Test
    @org.junit.jupiter.api.Tag("slow")
    void theHarnessCatchesARelayThatMarksRowsSentBeforeItsPipelinedPublishesAreConfirmed() throws Exception {
        assertBites(CrashPoint.OUTBOX_PIPELINE_IN_FLIGHT);
    }

    private static void assertBites(CrashPoint point) throws Exception {
        try (OutboxCrashHarness harness = new OutboxCrashHarness()) {
            OutboxCrashHarness.Report broken = harness.run(point, 1, 42, "broken-mark-first");
            REPORTS.add(broken);
            assertThat(broken.kills()).isOne();
            assertThat(broken.lost()).as("marked sent, never published: %s", broken).isGreaterThanOrEqualTo(1);
            assertThat(broken.exact()).isFalse();
        }
    }

    static void assertExact(OutboxCrashHarness.Report report) {
        assertThat(report.problems()).as(report.toString()).isEmpty();
        assertThat(report.lost()).as("lost: %s", report).isZero();
        assertThat(report.duplicated()).as("applied twice downstream: %s", report).isZero();
        assertThat(report.unsent()).as("left unsent: %s", report).isZero();
    }

    @AfterAll
    static void print() {
        REPORTS.forEach(r -> System.out.println("outbox-crash " + r));
    }
}
