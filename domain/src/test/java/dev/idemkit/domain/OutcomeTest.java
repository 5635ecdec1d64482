package dev.idemkit.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OutcomeTest {

    @Test
    void aRejectionNeedsAReason() {
        for (String blank : new String[] {null, "", "   "}) {
            assertThatThrownBy(() -> Outcome.rejected(blank)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("a rejection needs a reason");
        }
        assertThat(Outcome.rejected("bad payload").reason()).isEqualTo("bad payload");
    }

    @Test
    void onlyProcessedMeansTheEffectRan() {
        assertThat(Outcome.PROCESSED.effectRan()).isTrue();
        assertThat(Outcome.DUPLICATE.effectRan()).isFalse();
        assertThat(Outcome.STALE.effectRan()).isFalse();
        assertThat(Outcome.rejected("x").effectRan()).isFalse();
    }

    @Test
    void aTransitionNeedsAStateAndAnOutcome() {
        assertThatThrownBy(() -> new Transition<>(null, Outcome.PROCESSED)).isInstanceOf(NullPointerException.class)
                .hasMessage("state");
        assertThatThrownBy(() -> new Transition<>("s", null)).isInstanceOf(NullPointerException.class)
                .hasMessage("outcome");
    }
}
