package dev.idemkit.domain.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void defaultsDoubleFromOneSecondUpToSixtySeconds() {
        Backoff b = Backoff.defaults();
        assertThat(b.jitter()).isEqualTo(Jitter.FULL);
        assertThat(b.ceiling(0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(b.ceiling(1)).isEqualTo(Duration.ofSeconds(2));
        assertThat(b.ceiling(5)).isEqualTo(Duration.ofSeconds(32));
        assertThat(b.ceiling(6)).isEqualTo(Duration.ofSeconds(60));
        assertThat(b.ceiling(1000)).isEqualTo(Duration.ofSeconds(60));
        assertThat(b.ceiling(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void equalJitterIsHalfTheCeilingPlusAScaledHalf() {
        Backoff b = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(60), Jitter.EQUAL);
        assertThat(b.delay(2, RandomSource.fixed(0.0))).isEqualTo(Duration.ofSeconds(2));
        assertThat(b.delay(2, RandomSource.fixed(0.5))).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void fullJitterScalesTheCeiling() {
        Backoff b = Backoff.defaults();
        assertThat(b.delay(3, RandomSource.fixed(0.0))).isEqualTo(Duration.ZERO);
        assertThat(b.delay(3, RandomSource.fixed(0.25))).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void durationsBeyondWhatNanosecondsHoldSaturateInsteadOfThrowing() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        Backoff b = Backoff.exponential(huge, huge, Jitter.FULL);
        for (int attempt : new int[] {0, 1, 63, 64, 1000, Integer.MAX_VALUE}) {
            Duration ceiling = b.ceiling(attempt);
            assertThat(ceiling).isEqualTo(Duration.ofNanos(Long.MAX_VALUE)).isLessThanOrEqualTo(huge);
            assertThat(b.delay(attempt, RandomSource.fixed(Math.nextDown(1.0)))).isBetween(Duration.ZERO, ceiling);
            assertThat(b.withJitter(Jitter.EQUAL).delay(attempt, RandomSource.fixed(Math.nextDown(1.0))))
                    .isBetween(ceiling.dividedBy(2), ceiling);
        }
    }

    @Test
    void invalidSettingsAreRejectedWithTheRule() {
        assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, Duration.ofSeconds(1), Jitter.FULL))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("base must be positive");
        assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1), Jitter.FULL))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("below its base");
        assertThatThrownBy(() -> Backoff.defaults().ceiling(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("from 0");
    }

    @Test
    void aRandomSourceOutsideTheUnitIntervalIsRefused() {
        assertThatThrownBy(() -> RandomSource.fixed(1.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Backoff.defaults().delay(0, () -> 1.0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside [0, 1)");
        assertThatThrownBy(() -> Backoff.defaults().delay(0, () -> Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
