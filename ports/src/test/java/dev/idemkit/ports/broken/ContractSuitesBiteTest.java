package dev.idemkit.ports.broken;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Proves the contract suites bite: each runs, through the JUnit Platform test kit, against a
 * deliberately broken implementation, and exactly the tests that should catch the defect fail.
 */
// each test runs a whole broken suite that mostly waits out its patience; the suites share nothing
@Execution(ExecutionMode.CONCURRENT)
class ContractSuitesBiteTest {

    @Test
    void inboxSuiteCatchesACheckThenInsertRace() {
        assertThat(failedTests(BrokenCheckThenInsertInboxSuite.class))
                .containsExactly("manyThreadsDeliveringOneKeyRunTheEffectOnce");
    }

    @Test
    void inboxSuiteCatchesAKeyRecordedOutsideTheEffectsUnitOfWork() {
        assertThat(failedTests(BrokenRecordOutsideUnitOfWorkInboxSuite.class)).containsExactlyInAnyOrder(
                "failingEffectRollsBackItsKeySoThatARetryRunsIt",
                "effectExceptionsReachTheCallerUnchangedOrWrappedWhenChecked",
                "randomSchedulesWithDuplicatesAndFailuresMatchTheModel",
                "aFailingBatchKeepsNothingWhereBatchesAreAtomicAndNeverRunsAnEffectTwice");
    }

    @Test
    void inboxSuiteCatchesABatchThatRunsEffectsForDuplicates() {
        assertThat(failedTests(BrokenBatchRunsEveryDeliveryInboxSuite.class))
                .containsExactly("batchesOfRandomSchedulesDecideLikeTheModelAndRunEachNewKeyOnce");
    }

    @Test
    void recordsSuiteCatchesANonAtomicClaim() {
        assertThat(failedTests(BrokenCheckThenClaimRecordsSuite.class))
                .containsExactly("manyThreadsBeginningOneKeyLetExactlyOneClaimIt");
    }

    @Test
    void idempotentRequestsSuiteCatchesANonAtomicClaim() {
        assertThat(failedTests(BrokenCheckThenClaimRequestsSuite.class))
                .containsExactly("parallelSameKeyRequestsRunOnceAndAllGetTheFirstsResponse");
    }

    @Test
    void recordsSuiteCatchesAStoreThatIgnoresTheFence() {
        // the operation histories cannot catch it: without passing time no claim lapses, so none is taken over
        assertThat(failedTests(BrokenUnfencedRecordsSuite.class)).containsExactlyInAnyOrder(
                "renewKeepsARunningClaimPastItsFirstLease",
                "aLapsedClaimThatWasTakenOverCanNeitherCompleteNorRenewNorRelease");
    }

    @Test
    void versionedSuiteCatchesAnUpdateThatAlsoAppliesEqualVersions() {
        assertThat(failedTests(BrokenLessOrEqualVersionedSuite.class)).containsExactlyInAnyOrder(
                "scenarioAppliesOnlyNewerVersions",
                "randomSchedulesMatchTheModel",
                "onAppliedRunsInTheSameUnitOfWorkOnlyWhenApplied",
                "manyThreadsApplyingOneEventApplyItOnce");
    }

    @Test
    void upsertSuiteCatchesAnInsertThatOverwrites() {
        assertThat(failedTests(BrokenOverwritingUpsertSuite.class)).containsExactlyInAnyOrder(
                "scenarioInsertsEachDistinctKeyOnce",
                "randomSchedulesMatchTheModel",
                "firstInsertWins",
                "onInsertedRunsOnlyWhenInserted",
                "manyThreadsInsertingOneKeyInsertItOnce");
    }

    @Test
    void outboxSuiteCatchesAStoreThatHandsOutAKeyAnotherRelayHolds() {
        assertThat(failedTests(BrokenKeyBlindOutboxSuite.class)).containsExactlyInAnyOrder(
                "aKeyHeldByOneRelayIsNotHandedToAnother", "aPassThatGoesOnNeverHandsOutAKeyAnotherPassHoldsNorOneItHoldsAsNew",
                // asked for more, it hands the keys its own pass holds out again as new ones
                "aPassThatGoesOnHandsOutTheRowsCommittedMeanwhileForAKeyItHoldsAfterItsLastOneInOrder",
                "aPassThatGoesOnHandsOutNoMoreThanItsBoundAndNothingMoreOfAKeyWhoseRowFailed");
    }

    @Test
    void transportSuiteCatchesARetryThatAcknowledges() {
        assertThat(failedTests(BrokenAckOnRetryTransportSuite.class)).containsExactlyInAnyOrder(
                "retryRedeliversWithTheNextAttemptAndTheGrowingHistory",
                "aWaitingRetryDoesNotBlockOtherMessages",
                "aDeadLetterIsVisibleWithItsReasonAndAttemptsWithoutBeingConsumed");
    }

    /** Runs the suite with the Jupiter engine and returns the names of the test methods that failed. */
    private static Set<String> failedTests(Class<?> suite) {
        Events tests = EngineTestKit.engine("junit-jupiter").selectors(selectClass(suite)).execute().testEvents();
        assertThat(tests.started().count()).as("tests of %s that ran", suite.getSimpleName()).isGreaterThan(5);
        Set<String> failed = new TreeSet<>();
        tests.failed().stream().forEach(e -> e.getTestDescriptor().getSource()
                .filter(MethodSource.class::isInstance)
                .ifPresent(s -> failed.add(((MethodSource) s).getMethodName())));
        return failed;
    }
}
