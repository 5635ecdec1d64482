package dev.idemkit.domain.retry;

import java.time.Duration;
import java.util.Objects;

/** What to do with a delivery whose processing failed. */
public sealed interface RetryDecision {
    /** Try again after {@code delay}; the next delivery will be attempt number {@code nextAttempt} (1-based). */
    record RetryAfter(Duration delay, int nextAttempt) implements RetryDecision {
        public RetryAfter {
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("retry delay must not be negative, got " + delay);
            }
            if (nextAttempt < 2) {
                throw new IllegalArgumentException("a retry is attempt 2 or later, got " + nextAttempt);
            }
        }
    }

    /** Give up: dead-letter with this reason. */
    record DeadLetter(String reason) implements RetryDecision {
        public DeadLetter {
            if (reason == null || reason.isBlank()) {
                throw new IllegalArgumentException("a dead letter needs a reason");
            }
        }
    }
}
