package dev.idemkit.domain.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * How many times a delivery is attempted, how long to wait between attempts and which failures are
 * never retried.
 *
 * <p>Attempts count from 1: attempt 1 is the first delivery. With {@code maxAttempts = 3} a message
 * that always fails is delivered 3 times and then dead-lettered. The wait before attempt {@code n+1}
 * is {@code backoff.delay(n - 1)}.
 */
public record RetryPolicy(int maxAttempts, Backoff backoff, FailureClassifier classifier) {
    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        Objects.requireNonNull(backoff, "backoff");
        Objects.requireNonNull(classifier, "classifier");
    }

    /** 3 attempts, {@link Backoff#defaults()}, {@link FailureClassifier#defaults()}. */
    public static RetryPolicy defaults() {
        return new RetryPolicy(3, Backoff.defaults(), FailureClassifier.defaults());
    }

    public RetryPolicy withMaxAttempts(int n) {
        return new RetryPolicy(n, backoff, classifier);
    }

    public RetryPolicy withBackoff(Backoff b) {
        return new RetryPolicy(maxAttempts, b, classifier);
    }

    public RetryPolicy withClassifier(FailureClassifier c) {
        return new RetryPolicy(maxAttempts, backoff, c);
    }

    /**
     * Decides after attempt {@code attempt} (1-based) failed with {@code failure}.
     *
     * @return dead-letter at once for a non-retryable failure or when the attempts are spent,
     *     otherwise retry-after(backoff delay)
     */
    public RetryDecision decide(int attempt, Throwable failure, RandomSource random) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempts count from 1, got " + attempt);
        }
        String error = describe(failure);
        if (classifier.classify(failure) == FailureClass.NON_RETRYABLE) {
            return new RetryDecision.DeadLetter("non-retryable: " + error);
        }
        if (attempt >= maxAttempts) {
            return new RetryDecision.DeadLetter("gave up after " + attempt + " attempts: " + error);
        }
        return new RetryDecision.RetryAfter(backoff.delay(attempt - 1, random), attempt + 1);
    }

    /** The longest a message can spend waiting for its retries: the sum of every retry's ceiling. */
    public Duration longestRetryHorizon() {
        Duration total = Duration.ZERO;
        for (int retry = 0; retry < maxAttempts - 1; retry++) {
            total = total.plus(backoff.ceiling(retry));
        }
        return total;
    }

    /** "Type: message", the exception's class and message; never the payload. */
    public static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getSimpleName() + (message == null || message.isBlank() ? "" : ": " + message);
    }
}
