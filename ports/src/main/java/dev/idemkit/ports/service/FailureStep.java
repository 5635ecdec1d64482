package dev.idemkit.ports.service;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryDecision;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.Delivery;
import java.time.Duration;
import java.util.Objects;

/**
 * The one place where a delivery whose attempt failed is retried or dead-lettered (docs/ARCHITECTURE.md section 13):
 * the retry policy decides from the attempt number and the failure, and the delivery is told
 * {@link Delivery#retryAfter} (the transport keeps the message while it waits, no thread is held) or
 * {@link Delivery#deadLetter} with the reason, each with the failed attempt appended to its history. Every front door
 * comes here: the single-message flow, the batched consumer's fallback (through that flow) and the outbox relay (a row
 * is a delivery whose retry is a later hand-out and whose dead letter is a parked row). Thread-safe.
 */
final class FailureStep {
    private final RetryPolicy policy;
    private final RandomSource random;
    private final Clock clock;

    FailureStep(RetryPolicy policy, RandomSource random, Clock clock) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.random = Objects.requireNonNull(random, "random");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** What was done with a failed delivery: retried after {@code delay}, or dead-lettered with {@code reason}. */
    public record Settled(Decision decision, Duration delay, String reason, AttemptRecord attempt) {
        public Settled {
            Objects.requireNonNull(decision, "decision");
            Objects.requireNonNull(attempt, "attempt");
        }
    }

    /**
     * Settles {@code delivery} after its attempt failed with {@code failure}.
     *
     * @return {@link Decision#RETRIED} with the delay, or {@link Decision#DEAD_LETTERED} with the reason
     * @throws RuntimeException what the delivery's {@code retryAfter} / {@code deadLetter} threw: it is not settled
     */
    public Settled fail(Delivery delivery, Throwable failure) {
        AttemptRecord failed = new AttemptRecord(delivery.attempt(), clock.now(), RetryPolicy.describe(failure));
        RetryDecision decision = policy.decide(delivery.attempt(), failure, random);
        if (decision instanceof RetryDecision.RetryAfter retry) {
            delivery.retryAfter(retry.delay(), failed);
            return new Settled(Decision.RETRIED, retry.delay(), null, failed);
        }
        String reason = ((RetryDecision.DeadLetter) decision).reason();
        delivery.deadLetter(reason, failed);
        return new Settled(Decision.DEAD_LETTERED, Duration.ZERO, reason, failed);
    }

    /**
     * Dead-letters {@code delivery} at once, never retried: its message cannot be processed at all ({@code error}: why,
     * recorded as the attempt's error; the reason says it is not retryable).
     */
    public Settled reject(Delivery delivery, String error) {
        AttemptRecord failed = new AttemptRecord(delivery.attempt(), clock.now(), error);
        String reason = "non-retryable: " + error;
        delivery.deadLetter(reason, failed);
        return new Settled(Decision.DEAD_LETTERED, Duration.ZERO, reason, failed);
    }
}
