package dev.idemkit.domain.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.idemkit.domain.InvalidKeyException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    private static final RandomSource HALF = RandomSource.fixed(0.5);

    @Test
    void withThreeAttemptsAttemptsOneAndTwoRetryAndThreeDeadLetters() {
        RetryPolicy policy = RetryPolicy.defaults().withBackoff(Backoff.defaults().withJitter(Jitter.NONE));
        Exception timeout = new TimeoutException("no answer");

        assertThat(policy.decide(1, timeout, HALF)).isEqualTo(new RetryDecision.RetryAfter(Duration.ofSeconds(1), 2));
        assertThat(policy.decide(2, timeout, HALF)).isEqualTo(new RetryDecision.RetryAfter(Duration.ofSeconds(2), 3));
        assertThat(policy.decide(3, timeout, HALF))
                .isEqualTo(new RetryDecision.DeadLetter("gave up after 3 attempts: TimeoutException: no answer"));
    }

    @Test
    void aValidationFailureIsDeadLetteredAtOnceWithItsMessage() {
        RetryDecision d = RetryPolicy.defaults().decide(1, new IllegalArgumentException("amount must be positive"),
                HALF);
        assertThat(d).isEqualTo(new RetryDecision.DeadLetter(
                "non-retryable: IllegalArgumentException: amount must be positive"));
    }

    @Test
    void anInfrastructureFailureCausedByAnIllegalArgumentIsRetried() {
        // e.g. a store failure whose driver refused an argument on the way down
        RetryDecision d = RetryPolicy.defaults().decide(1, new IllegalStateException("PostgreSQL failed during inbox insert",
                new IllegalArgumentException("invalid connection property")), HALF);
        assertThat(d).isInstanceOf(RetryDecision.RetryAfter.class);
    }

    @Test
    void theDefaultClassifierLooksThroughTheWholeCauseChainForAnExplicitVerdictOnly() {
        FailureClassifier c = FailureClassifier.defaults();
        assertThat(c.classify(new IOException("reset"))).isEqualTo(FailureClass.RETRYABLE);
        assertThat(c.classify(new IllegalStateException(new RuntimeException(new NonRetryableException("bad")))))
                .isEqualTo(FailureClass.NON_RETRYABLE);
        assertThat(c.classify(new InvalidKeyException("message id is empty"))).isEqualTo(FailureClass.NON_RETRYABLE);
        assertThat(c.classify(new RuntimeException(new InvalidKeyException("message id is empty"))))
                .isEqualTo(FailureClass.RETRYABLE);
    }

    @Test
    void aCyclicCauseChainIsClassifiedWithoutLoopingForever() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b");
        a.initCause(b);
        b.initCause(a);
        FailureClass result = assertTimeoutPreemptively(Duration.ofSeconds(5),
                () -> FailureClassifier.defaults().classify(a));
        assertThat(result).isEqualTo(FailureClass.RETRYABLE);

        NonRetryableException bad = new NonRetryableException("bad");
        RuntimeException wrapper = new RuntimeException("wrapper", bad);
        bad.initCause(wrapper);
        assertThat(assertTimeoutPreemptively(Duration.ofSeconds(5), () -> FailureClassifier.defaults().classify(wrapper)))
                .isEqualTo(FailureClass.NON_RETRYABLE);
    }

    @Test
    void longestRetryHorizonIsTheSumOfTheRetryCeilings() {
        RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(5);
        // 4 retries: ceilings 1 s + 2 s + 4 s + 8 s
        assertThat(policy.longestRetryHorizon()).isEqualTo(Duration.ofSeconds(15));
        assertThat(policy.withMaxAttempts(1).longestRetryHorizon()).isEqualTo(Duration.ZERO);
    }

    @Test
    void describeNamesTheExceptionTypeAndMessageOnly() {
        assertThat(RetryPolicy.describe(new IllegalStateException("boom"))).isEqualTo("IllegalStateException: boom");
        assertThat(RetryPolicy.describe(new IllegalStateException())).isEqualTo("IllegalStateException");
    }

    @Test
    void invalidArgumentsAreRefused() {
        assertThatThrownBy(() -> RetryPolicy.defaults().withMaxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> RetryPolicy.defaults().decide(0, new IOException(), HALF))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("from 1");
        assertThatThrownBy(() -> new RetryDecision.RetryAfter(Duration.ofSeconds(1), 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryDecision.DeadLetter(" ")).isInstanceOf(IllegalArgumentException.class);
    }
}
