package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link SpringListenerCrashIT} at 20 kills per crash point (the full tier, {@code -Pfull}). */
@Tag("slow")
class SpringListenerCrashSlowIT {

    @Test
    void killedTwentyTimesAtEveryPointOfTheListenersSettlePathLosesNothingAndAppliesNothingTwice() throws Exception {
        assertThat(SpringListenerCrashIT.run(20).describe()).isEqualTo("lost=0 twice=0 dead-lettered=0 left-in-queues=0");
    }

    @Test
    void aBatchListenerOfTheBuildThatAcknowledgesBeforeTheCommitLosesTheCreditsItWasKilledInside() throws Exception {
        SpringListenerCrashIT.Report r = SpringListenerCrashIT.brokenBatch();
        assertThat(r.lost()).as("credits lost by the build that acks before it commits: " + r.describe()).isPositive();
    }

    @Test
    void aBatchListenerKilledTwentyTimesAtEveryPointLosesNothingAndAppliesNothingTwice() throws Exception {
        assertThat(SpringListenerCrashIT.run(20, true).describe())
                .isEqualTo("lost=0 twice=0 dead-lettered=0 left-in-queues=0");
    }
}
