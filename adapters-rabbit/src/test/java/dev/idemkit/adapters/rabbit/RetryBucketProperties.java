package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The retry-bucket choice that bounds head-of-line waiting in a retry queue. */
class RetryBucketProperties {
    private static final long MAX_BUCKET_MILLIS = RabbitTopology.MAX_BUCKET_SECONDS * 1000L;

    /** Law: a delay up to the largest bucket goes to a power-of-two bucket that holds it. */
    @Test
    void everyDelayFitsItsBucket() {
        qt().withExamples(1000).forAll(longs().between(0, MAX_BUCKET_MILLIS)).checkAssert(millis -> {
            int bucket = RabbitTopology.bucketSeconds(Duration.ofMillis(millis));
            assertThat(Integer.bitCount(bucket)).as("power of two").isEqualTo(1);
            assertThat(bucket * 1000L).isGreaterThanOrEqualTo(millis);
        });
    }

    /**
     * Law: above one second the bucket is less than twice the delay, so a message held behind a longer
     * one in the same bucket waits less than twice its own delay.
     */
    @Test
    void aBucketIsLessThanTwiceItsDelays() {
        qt().withExamples(1000).forAll(longs().between(1001, MAX_BUCKET_MILLIS)).checkAssert(millis -> {
            int bucket = RabbitTopology.bucketSeconds(Duration.ofMillis(millis));
            assertThat(bucket * 1000L).isLessThan(2 * millis);
        });
    }

    /** Law: delays beyond the largest bucket, however long, get the largest bucket. */
    @Test
    void longerDelaysAreCutToTheLargestBucket() {
        qt().withExamples(1000).forAll(longs().between(MAX_BUCKET_MILLIS + 1, Long.MAX_VALUE / 2)).checkAssert(millis ->
                assertThat(RabbitTopology.bucketSeconds(Duration.ofMillis(millis)))
                        .isEqualTo(RabbitTopology.MAX_BUCKET_SECONDS));
    }
}
