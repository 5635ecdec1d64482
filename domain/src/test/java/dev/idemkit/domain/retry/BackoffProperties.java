package dev.idemkit.domain.retry;

import static dev.idemkit.domain.Generators.attempts;
import static dev.idemkit.domain.Generators.basesAndCaps;
import static dev.idemkit.domain.Generators.unitDraws;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.Generators.BaseAndCap;
import java.math.BigInteger;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffProperties {

    /** The ceiling computed without any shortcut: min(cap, base * 2^attempt) in exact integers. */
    private static long expectedCeilingNanos(BaseAndCap bc, int attempt) {
        // any shift of 64 or more already exceeds every long cap, so shifting by at most 64 is exact
        BigInteger uncapped = BigInteger.valueOf(bc.baseNanos()).shiftLeft(Math.min(attempt, 64));
        return uncapped.min(BigInteger.valueOf(bc.capNanos())).longValueExact();
    }

    private static Backoff backoff(BaseAndCap bc, Jitter jitter) {
        return Backoff.exponential(bc.base(), bc.cap(), jitter);
    }

    /** Law: ceiling(attempt) == min(cap, base * 2^attempt) for every attempt, base and cap, with no overflow. */
    @Test
    void ceilingIsTheCappedExponentialWithoutOverflow() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts()).checkAssert((bc, attempt) ->
                assertThat(backoff(bc, Jitter.FULL).ceiling(attempt).toNanos())
                        .isEqualTo(expectedCeilingNanos(bc, attempt)));
    }

    /** Law: a FULL-jitter delay lies in [0, min(cap, base * 2^attempt)]. */
    @Test
    void fullJitterDelayLiesBetweenZeroAndTheCeiling() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts(), unitDraws()).checkAssert((bc, attempt, r) -> {
            Duration delay = backoff(bc, Jitter.FULL).delay(attempt, RandomSource.fixed(r));
            assertThat(delay.toNanos()).isBetween(0L, expectedCeilingNanos(bc, attempt));
        });
    }

    /** Law: an EQUAL-jitter delay lies in [ceiling/2, ceiling] (in whole nanoseconds). */
    @Test
    void equalJitterDelayLiesBetweenHalfTheCeilingAndTheCeiling() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts(), unitDraws()).checkAssert((bc, attempt, r) -> {
            long ceiling = expectedCeilingNanos(bc, attempt);
            Duration delay = backoff(bc, Jitter.EQUAL).delay(attempt, RandomSource.fixed(r));
            assertThat(delay.toNanos()).isBetween(ceiling / 2, ceiling);
        });
    }

    /** Law: a NONE-jitter delay is exactly the ceiling and never draws a random number. */
    @Test
    void noJitterDelayIsExactlyTheCeiling() {
        RandomSource mustNotBeUsed = () -> {
            throw new AssertionError("NONE jitter drew a random number");
        };
        qt().withExamples(1000).forAll(basesAndCaps(), attempts()).checkAssert((bc, attempt) ->
                assertThat(backoff(bc, Jitter.NONE).delay(attempt, mustNotBeUsed).toNanos())
                        .isEqualTo(expectedCeilingNanos(bc, attempt)));
    }

    /** Law: ceilings never decrease as the attempt grows. */
    @Test
    void ceilingsAreMonotonicInTheAttempt() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts()).checkAssert((bc, attempt) -> {
            Backoff b = backoff(bc, Jitter.FULL);
            int next = attempt == Integer.MAX_VALUE ? attempt : attempt + 1;
            assertThat(b.ceiling(next)).isGreaterThanOrEqualTo(b.ceiling(attempt));
        });
    }

    /** Law: once the ceiling reaches the cap, every later attempt stays at the cap; 1000 and Integer.MAX_VALUE are capped. */
    @Test
    void attemptsBeyondTheCapStayCapped() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts(), attempts()).checkAssert((bc, a, b) -> {
            Backoff backoff = backoff(bc, Jitter.NONE);
            int earlier = Math.min(a, b);
            int later = Math.max(a, b);
            if (backoff.ceiling(earlier).equals(bc.cap())) {
                assertThat(backoff.ceiling(later)).isEqualTo(bc.cap());
            }
            assertThat(backoff.ceiling(1000)).isEqualTo(bc.cap());
            assertThat(backoff.ceiling(Integer.MAX_VALUE)).isEqualTo(bc.cap());
        });
    }

    /** Law: the draw spans the whole jitter range: 0 gives the lowest delay (0 or ceiling/2), the top draw almost the ceiling. */
    @Test
    void theDrawSpansTheWholeJitterRange() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts()).checkAssert((bc, attempt) -> {
            long ceiling = expectedCeilingNanos(bc, attempt);
            long slack = ceiling / (1L << 40) + 1; // a double carries 53 bits: only rounding may separate them
            RandomSource bottom = RandomSource.fixed(0.0);
            RandomSource top = RandomSource.fixed(Math.nextDown(1.0));
            assertThat(backoff(bc, Jitter.FULL).delay(attempt, bottom).toNanos()).isZero();
            assertThat(backoff(bc, Jitter.FULL).delay(attempt, top).toNanos()).isBetween(ceiling - slack, ceiling);
            assertThat(backoff(bc, Jitter.EQUAL).delay(attempt, bottom).toNanos()).isEqualTo(ceiling / 2);
            assertThat(backoff(bc, Jitter.EQUAL).delay(attempt, top).toNanos()).isBetween(ceiling - slack, ceiling);
        });
    }

    /** Law: for a fixed attempt, a larger random draw never gives a shorter delay (the jitter spreads, never reorders). */
    @Test
    void delayGrowsWithTheRandomDraw() {
        qt().withExamples(1000).forAll(basesAndCaps(), attempts(), unitDraws(), unitDraws())
                .checkAssert((bc, attempt, r1, r2) -> {
                    for (Jitter jitter : Jitter.values()) {
                        Backoff b = backoff(bc, jitter);
                        Duration low = b.delay(attempt, RandomSource.fixed(Math.min(r1, r2)));
                        Duration high = b.delay(attempt, RandomSource.fixed(Math.max(r1, r2)));
                        assertThat(low).as("%s", jitter).isLessThanOrEqualTo(high);
                    }
                });
    }
}
