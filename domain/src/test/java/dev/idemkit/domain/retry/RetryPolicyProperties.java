package dev.idemkit.domain.retry;

import static dev.idemkit.domain.Generators.nonRetryableFailures;
import static dev.idemkit.domain.Generators.retryableFailures;
import static dev.idemkit.domain.Generators.unitDraws;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import org.junit.jupiter.api.Test;

class RetryPolicyProperties {

    /** Law: a failure with a non-retryable exception anywhere in its cause chain dead-letters at attempt 1. */
    @Test
    void nonRetryableFailuresDeadLetterAtTheFirstAttempt() {
        qt().withExamples(1000).forAll(nonRetryableFailures(), integers().between(1, 100), unitDraws())
                .checkAssert((failure, maxAttempts, r) -> {
                    RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(maxAttempts);
                    assertThat(policy.classifier().classify(failure)).isEqualTo(FailureClass.NON_RETRYABLE);
                    assertThat(policy.decide(1, failure, RandomSource.fixed(r)))
                            .isInstanceOfSatisfying(RetryDecision.DeadLetter.class,
                                    d -> assertThat(d.reason()).startsWith("non-retryable: "));
                });
    }

    /** Law: a retryable failure retries exactly maxAttempts-1 times (nextAttempt = attempt+1), then dead-letters. */
    @Test
    void retryableFailuresRetryExactlyMaxAttemptsMinusOneTimes() {
        qt().withExamples(1000).forAll(retryableFailures(), integers().between(1, 40), unitDraws())
                .checkAssert((failure, maxAttempts, r) -> {
                    RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(maxAttempts);
                    assertThat(policy.classifier().classify(failure)).isEqualTo(FailureClass.RETRYABLE);
                    int retries = 0;
                    int attempt = 1;
                    RetryDecision decision = policy.decide(attempt, failure, RandomSource.fixed(r));
                    while (decision instanceof RetryDecision.RetryAfter retry) {
                        assertThat(retry.nextAttempt()).isEqualTo(attempt + 1);
                        assertThat(retry.delay()).isLessThanOrEqualTo(policy.backoff().ceiling(attempt - 1));
                        retries++;
                        attempt = retry.nextAttempt();
                        assertThat(attempt).as("attempts never pass maxAttempts").isLessThanOrEqualTo(maxAttempts);
                        decision = policy.decide(attempt, failure, RandomSource.fixed(r));
                    }
                    assertThat(retries).isEqualTo(maxAttempts - 1);
                    assertThat(attempt).isEqualTo(maxAttempts);
                    assertThat(decision).isInstanceOfSatisfying(RetryDecision.DeadLetter.class,
                            d -> assertThat(d.reason()).startsWith("gave up after " + maxAttempts + " attempts"));
                });
    }
}
