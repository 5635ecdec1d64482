package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A small sample of the crash matrix inside {@code mvn verify}: every crash point, each on one combination in turn
 * (so every combination is killed too), the child SIGKILLed there {@value #KILLS} times, then drained; every
 * message's effect exactly once, nothing unsettled. Every point of the named combinations, with the same kills:
 * {@code -Didemkit.crash.only=PG_RABBIT,PG_SQS,...}; the full matrix (20 kills per point and combination) is
 * {@link CrashMatrixSlowIT}. The harness is shown to bite by
 * {@link #theHarnessCatchesAConsumerThatAcknowledgesBeforeItCommits()}.
 */
class CrashHarnessIT {
    private static final int KILLS = 2;
    private static final List<CrashHarness.Report> REPORTS = new ArrayList<>();

    /**
     * The combinations to run: all, or those named in {@code -Didemkit.crash.only=COMBINATION[:POINT],...} (the slow
     * matrix's property; here a point narrows nothing, its combination runs whole).
     */
    static List<Combination> combinations() {
        String only = System.getProperty("idemkit.crash.only", "");
        return only.isBlank() ? List.of(Combination.values()) : Stream.of(only.split(",")).map(String::trim)
                .map(x -> Combination.valueOf(x.split(":")[0])).distinct().toList();
    }

    /**
     * With {@code idemkit.crash.only}: every point of the named combinations. Without it (verify): each point once, on
     * the combinations in turn (the next one it applies to), so that every point and every combination is killed at
     * least once in a fraction of the cross product's time.
     */
    static Stream<Arguments> pointsAndCombinations() {
        List<Arguments> out = new ArrayList<>();
        if (!System.getProperty("idemkit.crash.only", "").isBlank()) {
            for (Combination c : combinations()) {
                for (CrashPoint p : CrashPoint.values()) {
                    if (p.appliesTo(c)) {
                        out.add(Arguments.of(c, p));
                    }
                }
            }
            return out.stream();
        }
        Combination[] all = Combination.values();
        int next = 0;
        for (CrashPoint p : CrashPoint.values()) {
            for (int i = 0; i < all.length; i++) {
                Combination c = all[(next + i) % all.length];
                if (p.appliesTo(c)) {
                    out.add(Arguments.of(c, p));
                    next = (next + i + 1) % all.length;
                    break;
                }
            }
        }
        return out.stream();
    }

    @Test
    void theVerifySampleKillsEveryPointAndEveryCombination() {
        List<Arguments> sample = pointsAndCombinations().toList();
        if (!System.getProperty("idemkit.crash.only", "").isBlank()) {
            return; // a chosen run is not the sample
        }
        assertThat(sample.stream().map(a -> a.get()[1]).distinct().count()).as("points of the consumer")
                .isEqualTo(java.util.Arrays.stream(CrashPoint.values())
                        .filter(p -> java.util.Arrays.stream(Combination.values()).anyMatch(p::appliesTo)).count());
        java.util.Set<Object> killed = new java.util.HashSet<>();
        sample.forEach(a -> killed.add(a.get()[0]));
        batchedCases().forEach(a -> killed.add(a.get()[0]));
        assertThat(killed).as("combinations").containsExactlyInAnyOrder((Object[]) Combination.values());
    }

    @ParameterizedTest(name = "{0} killed at {1}")
    @MethodSource("pointsAndCombinations")
    void everyEffectRunsExactlyOnceWhenTheConsumerIsKilledThere(Combination combination, CrashPoint point)
            throws Exception {
        try (CrashHarness harness = new CrashHarness(combination)) {
            CrashHarness.Report report = harness.run(point, KILLS, System.nanoTime(), "consume");
            REPORTS.add(report);
            assertThat(report.kills()).as("kills that landed: %s", report).isGreaterThanOrEqualTo(1);
            assertExact(report);
        }
    }

    /** The batched consumer serve runs by default, killed inside a batch's effects and between its commit and its acks. */
    static Stream<Arguments> batchedCases() {
        return Stream.of(Arguments.of(Combination.PG_RABBIT, CrashPoint.AFTER_COMMIT_BEFORE_ACK),
                Arguments.of(Combination.PG_SQS, CrashPoint.INSIDE_EFFECT),
                Arguments.of(Combination.REDIS_RABBIT, CrashPoint.AFTER_COMMIT_BEFORE_ACK),
                Arguments.of(Combination.PG_KAFKA, CrashPoint.AFTER_COMMIT_BEFORE_ACK))
                .filter(a -> combinations().contains((Combination) a.get()[0]));
    }

    @ParameterizedTest(name = "batched on {0} killed at {1}")
    @MethodSource("batchedCases")
    void theBatchedConsumerRunsEveryEffectExactlyOnceWhenKilledThere(Combination combination, CrashPoint point)
            throws Exception {
        try (CrashHarness harness = new CrashHarness(combination)) {
            CrashHarness.Report report = harness.run(point, KILLS, System.nanoTime(), "batched");
            REPORTS.add(report);
            assertThat(report.kills()).as("kills that landed: %s", report).isGreaterThanOrEqualTo(1);
            assertExact(report);
        }
    }

    /**
     * The delivery-limit safety net of quorum queues, with real processes: a message whose effect makes the consumer
     * process exit (before it can settle or count an attempt) kills at most limit + 1 consumers, one after another,
     * then the broker dead-letters it, and the DLQ names the reason; what it was delivered beside is processed once or
     * dead-lettered the same way and redriven, never lost nor run twice. Without {@code x-delivery-limit} it would kill consumers
     * forever (the loop gives up after limit + 3 and reports it).
     */
    @Test
    void aMessageThatMakesItsConsumerProcessExitEndsInTheDeadLetterQueueAfterTheDeliveryLimit() throws Exception {
        int limit = 3;
        try (CrashHarness harness = new CrashHarness(Combination.PG_RABBIT, java.util.Map.of(
                "IDEMKIT_RABBIT_QUEUE_TYPE", "quorum", "IDEMKIT_RABBIT_DELIVERY_LIMIT", Integer.toString(limit)))) {
            CrashHarness.Report report = harness.runDeliveryLimit(limit);
            REPORTS.add(report);
            assertThat(report.kills()).as("consumer processes the message made exit").isBetween((limit + 2) / 2, limit + 1);
            assertExact(report);
            assertThat(report.deadLetters()).isGreaterThanOrEqualTo(1);
        }
    }

    /** The same harness bites on the batched consumer: acknowledged before its batch committed, killed inside it. */
    @Test
    void theHarnessCatchesABatchedConsumerThatAcknowledgesBeforeItsBatchCommits() throws Exception {
        try (CrashHarness harness = new CrashHarness(Combination.PG_RABBIT)) {
            CrashHarness.Report broken = harness.run(CrashPoint.INSIDE_EFFECT, 1, 42, "batched-broken-ack-first");
            REPORTS.add(broken);
            assertThat(broken.kills()).isEqualTo(1);
            assertThat(broken.lost()).as("the broken batched consumer loses what it acked: %s", broken)
                    .isGreaterThanOrEqualTo(1);
        }
    }

    /**
     * The harness bites: a consumer that acknowledges a delivery before its unit of work commits (here: before the
     * effect even runs) loses the message when it is killed inside the effect, and the harness reports it lost.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("combinations")
    void theHarnessCatchesAConsumerThatAcknowledgesBeforeItCommits(Combination combination) throws Exception {
        try (CrashHarness harness = new CrashHarness(combination)) {
            CrashHarness.Report broken = harness.run(CrashPoint.INSIDE_EFFECT, 1, 42, "broken-ack-first");
            REPORTS.add(broken);
            assertThat(broken.kills()).isEqualTo(1);
            assertThat(broken.lost()).as("the broken consumer loses what it acked: %s", broken).isGreaterThanOrEqualTo(1);
            assertThat(broken.exact()).isFalse();
            // the same kill on the real consumer is the INSIDE_EFFECT case of everyEffectRunsExactlyOnce... above
        }
    }

    /**
     * The harness bites on duplicates too: a consumer without an inbox, killed after its commit and before its ack,
     * runs the redelivered message's effect a second time, and the harness reports it duplicated.
     */
    @Test
    void theHarnessCatchesAConsumerWhoseEffectRunsAgainOnRedelivery() throws Exception {
        try (CrashHarness harness = new CrashHarness(Combination.PG_RABBIT)) {
            CrashHarness.Report broken = harness.run(CrashPoint.AFTER_COMMIT_BEFORE_ACK, 1, 7, "broken-no-inbox");
            REPORTS.add(broken);
            assertThat(broken.kills()).isEqualTo(1);
            assertThat(broken.duplicated()).as("the effect ran twice: %s", broken).isGreaterThanOrEqualTo(1);
            assertThat(broken.exact()).isFalse();
        }
    }

    /** No problem reported, nothing lost, nothing run twice, nothing left unsettled. */
    private static void assertExact(CrashHarness.Report report) {
        assertThat(report.problems()).as(report.toString()).isEmpty();
        assertThat(report.lost()).as("lost: %s", report).isZero();
        assertThat(report.duplicated()).as("duplicated: %s", report).isZero();
        assertThat(report.unsettled()).as("unsettled: %s", report).isZero();
    }

    @AfterAll
    static void print() {
        REPORTS.forEach(r -> System.out.println("crash-harness " + r));
    }
}
