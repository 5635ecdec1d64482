package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.app.crash.CrashHarness.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The crash harness in the README's test command: on one combination per transport (PostgreSQL with RabbitMQ, SQS
 * and Kafka), every crash point of the consumer, single-message and batched, is SIGKILLed once, in one chained run
 * per combination ({@link CrashHarness#runChain}); the Redis store is killed around its own commit. Then every
 * message's effect exactly once, nothing unsettled. The harness is shown to bite: on RabbitMQ a consumer that
 * acknowledges before it commits loses messages, and one without an inbox runs an effect twice; the full tier shows
 * the first bite on every other transport, on the batched consumer and on the Redis store, and the quorum queue's
 * delivery limit ending a consumer-killing message in the DLQ. The cases run two at a time (their
 * queues, schemas and key prefixes are their own). Every point of every combination, 20 kills each:
 * {@link CrashMatrixSlowIT} in the full tier.
 */
@Execution(ExecutionMode.CONCURRENT)
class CrashHarnessIT {
    private static final List<CrashHarness.Report> REPORTS = Collections.synchronizedList(new ArrayList<>());
    /** The batched consumer's points: inside a batch's effects, between its commit and its (bulk) acks. */
    private static final Set<CrashPoint> BATCHED = EnumSet.of(CrashPoint.INSIDE_EFFECT, CrashPoint.AFTER_COMMIT_BEFORE_ACK);

    /** Per combination, the kills of its chain. */
    static Stream<Arguments> chains() {
        return Stream.of(Combination.PG_RABBIT, Combination.PG_SQS, Combination.PG_KAFKA, Combination.PG_KAFKA_SHARE,
                Combination.PG_KAFKA_DB, Combination.REDIS_RABBIT).map(c -> Arguments.of(c, steps(c)));
    }

    /** {@link #chains()}, or only the combinations named by {@code -Didemkit.crash.only=PG_KAFKA,...}. */
    static Stream<Arguments> chosenChains() {
        String only = System.getProperty("idemkit.crash.only", "");
        return chains().filter(a -> only.isBlank()
                || Stream.of(only.split(",")).map(String::trim).anyMatch(a.get()[0].toString()::equals));
    }

    /**
     * Every consumer point of the combination, then the batched ones; on Redis (whose transport PG_RABBIT covers) the
     * points of its own atomic step, single and batched.
     */
    static List<Step> steps(Combination c) {
        List<Step> steps = new ArrayList<>();
        for (CrashPoint p : CrashPoint.values()) {
            if (p.appliesTo(c) && (c.store == Combination.Store.POSTGRES || BATCHED.contains(p))) {
                steps.add(new Step("consume", p));
            }
        }
        for (CrashPoint p : BATCHED) {
            steps.add(new Step("batched", p));
        }
        return steps;
    }

    @Test
    void everyTransportHasEveryPointOfItsPathKilledSingleAndBatched() {
        List<Arguments> all = chains().toList();
        for (Combination.Transport t : Combination.Transport.values()) {
            Set<Step> killed = new java.util.HashSet<>();
            all.stream().filter(a -> ((Combination) a.get()[0]).transport == t)
                    .forEach(a -> killed.addAll(castSteps(a.get()[1])));
            for (CrashPoint p : CrashPoint.values()) {
                if (Arrays.stream(Combination.values()).anyMatch(c -> c.transport == t && p.appliesTo(c))) {
                    assertThat(killed).as("%s killed at %s", t, p).contains(new Step("consume", p));
                }
            }
            BATCHED.forEach(p -> assertThat(killed).as("%s batched killed at %s", t, p).contains(new Step("batched", p)));
        }
        assertThat(all).extracting(a -> a.get()[0]).as("combinations").containsExactlyInAnyOrder(
                (Object[]) Combination.values());
    }

    @SuppressWarnings("unchecked")
    private static List<Step> castSteps(Object o) {
        return (List<Step>) o;
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("chosenChains")
    void everyEffectRunsExactlyOnceWhenTheConsumerIsKilledOnceAtEachPoint(Combination combination, List<Step> steps)
            throws Exception {
        try (CrashHarness harness = new CrashHarness(combination)) {
            CrashHarness.Report report = harness.runChain(steps, System.nanoTime());
            REPORTS.add(report);
            assertThat(report.kills()).as("kills that landed: %s", report).isEqualTo(steps.size());
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
    @Tag("slow") // full tier: QueueTypeIT ends a message whose consumer dies holding it in the DLQ (a connection abort)
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

    /**
     * The same harness bites on the batched consumer: acknowledged before its batch committed, killed inside it (full
     * tier: the single consumer's bite above shows the harness counts what a consumer acked and lost).
     */
    @Test
    @Tag("slow")
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
        assertBitesOn(combination);
    }

    /**
     * The same bite on the other transports: full tier (the suite's time budget). Here the harness is shown to bite on
     * RabbitMQ; each transport's own accounting of lost messages is the same {@link CrashHarness} check.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("otherTransports")
    @Tag("slow")
    void theHarnessCatchesAConsumerThatAcknowledgesBeforeItCommitsOnEveryTransport(Combination combination)
            throws Exception {
        assertBitesOn(combination);
    }

    private static void assertBitesOn(Combination combination) throws Exception {
        try (CrashHarness harness = new CrashHarness(combination)) {
            CrashHarness.Report broken = harness.run(CrashPoint.INSIDE_EFFECT, 1, 42, "broken-ack-first");
            REPORTS.add(broken);
            assertBites(broken);
            // the same kill on the real consumer is the INSIDE_EFFECT step of everyEffectRunsExactlyOnce... above
        }
    }

    /** The bite of the README's test command: RabbitMQ. The Redis store's bite runs in {@link CrashMatrixSlowIT}. */
    static Stream<Combination> combinations() {
        return Stream.of(Combination.PG_RABBIT);
    }

    static Stream<Combination> otherTransports() {
        return Stream.of(Combination.PG_SQS, Combination.PG_KAFKA, Combination.PG_KAFKA_SHARE);
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
    static void assertBites(CrashHarness.Report broken) {
        assertThat(broken.kills()).isEqualTo(1);
        assertThat(broken.lost()).as("the broken consumer loses what it acked: %s", broken).isGreaterThanOrEqualTo(1);
        assertThat(broken.exact()).isFalse();
    }

    static void assertExact(CrashHarness.Report report) {
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
