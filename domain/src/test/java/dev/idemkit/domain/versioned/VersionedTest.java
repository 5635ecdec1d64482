package dev.idemkit.domain.versioned;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Version;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class VersionedTest {

    @Test
    void decideAppliesOnlyNewerVersions() {
        assertThat(Versioned.decide(Optional.empty(), Version.of(0))).isEqualTo(Outcome.PROCESSED);
        assertThat(Versioned.decide(Optional.of(Version.of(3)), Version.of(4))).isEqualTo(Outcome.PROCESSED);
        assertThat(Versioned.decide(Optional.of(Version.of(3)), Version.of(3))).isEqualTo(Outcome.DUPLICATE);
        assertThat(Versioned.decide(Optional.of(Version.of(3)), Version.of(2))).isEqualTo(Outcome.STALE);
    }

    @Test
    void lateOldEventIsStaleAndTheNewestValueStays() {
        VersionedState<String> s = VersionedState.empty();
        List<Outcome> outcomes = new ArrayList<>();
        for (VersionedEvent<String> e : List.of(event(1, "created"), event(3, "shipped"), event(2, "paid"),
                event(3, "shipped"))) {
            var t = Versioned.apply(s, e);
            s = t.state();
            outcomes.add(t.outcome());
        }
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.STALE, Outcome.DUPLICATE);
        assertThat(s.get("order-1")).contains(new VersionedValue<>(Version.of(3), "shipped"));
    }

    @Test
    void versionsAreNonNegative() {
        assertThatThrownBy(() -> Version.of(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(">= 0");
        assertThat(Version.of(2).isNewerThan(Version.of(1))).isTrue();
        assertThat(Version.of(1).isNewerThan(Version.of(1))).isFalse();
    }

    @Test
    void aggregateIdFollowsTheKeyRule() {
        assertThatThrownBy(() -> new VersionedEvent<>("order 1", Version.of(1), "x"))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("aggregate id");
    }

    private static VersionedEvent<String> event(long version, String value) {
        return new VersionedEvent<>("order-1", Version.of(version), value);
    }
}
