package dev.idemkit.exercises;

import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.RandomSource;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Exercise 4's experiment: {@code clients} clients fail at the same instant (t = 0) against a server
 * that is down for {@code outage}; each retries with the given backoff until a retry lands after the
 * outage. Only the retries are counted: the first, simultaneous failure is the same with or without
 * jitter. Time is simulated (every request is an arrival at a simulated instant), so the result is
 * exact and repeatable for a seed; the delays come from the domain's {@link Backoff}, the same code
 * the transports use.
 *
 * <p>The server's load is counted per bucket of {@code bucket} width; peak QPS is the fullest bucket
 * divided by its width.
 */
public final class RetryStorm {
    /** The arrivals per bucket and the peak rate. */
    public record Result(long[] perBucket, Duration bucket, long totalRequests, double peakQps) {
        public int peakBucketCount() {
            return (int) Arrays.stream(perBucket).max().orElse(0);
        }

        /** Buckets that received at least one request. */
        public long busyBuckets() {
            return Arrays.stream(perBucket).filter(n -> n > 0).count();
        }
    }

    private RetryStorm() {}

    /** Where each client's FIRST retry lands, in {@code bins} equal bins over [0, base]. */
    public static long[] firstRetries(int clients, Backoff backoff, int bins, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] perBin = new long[bins];
        long ceiling = backoff.ceiling(0).toNanos();
        for (int c = 0; c < clients; c++) {
            long at = backoff.delay(0, random::nextDouble).toNanos();
            perBin[(int) Math.min(bins - 1, at * bins / ceiling)]++;
        }
        return perBin;
    }

    public static Result run(int clients, Backoff backoff, Duration outage, Duration bucket, Duration horizon,
            long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        RandomSource source = random::nextDouble;
        int buckets = (int) (horizon.toNanos() / bucket.toNanos()) + 1;
        long[] perBucket = new long[buckets];
        long total = 0;
        for (int c = 0; c < clients; c++) {
            int attempt = 0;
            long at = backoff.delay(attempt++, source).toNanos(); // every client's first request failed at t = 0
            while (true) {
                int slot = (int) (at / bucket.toNanos());
                if (slot >= buckets) {
                    break;
                }
                perBucket[slot]++;
                total++;
                if (at >= outage.toNanos()) {
                    break; // the server is back: this request succeeded
                }
                at += backoff.delay(attempt++, source).toNanos();
            }
        }
        long peak = Arrays.stream(perBucket).max().orElse(0);
        double seconds = bucket.toNanos() / 1e9;
        return new Result(perBucket, bucket, total, peak / seconds);
    }
}
