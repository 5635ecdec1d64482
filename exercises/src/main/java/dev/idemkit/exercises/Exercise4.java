package dev.idemkit.exercises;

import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Exercise 4: exponential backoff with full jitter versus no jitter, 100 clients failing together.
 * Criterion: the histogram is spread out with jitter and a spike without; the peak QPS with jitter is
 * at least 10x lower.
 */
public final class Exercise4 {
    static final int CLIENTS = 100;
    static final Backoff SEED_BACKOFF = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(60), Jitter.FULL);
    static final Duration OUTAGE = Duration.ofSeconds(10);
    static final Duration BUCKET = Duration.ofMillis(10);
    static final Duration HORIZON = Duration.ofSeconds(180);
    static final double ROW_MILLIS = 500;
    static final int ROWS = 32;
    static final int FIRST_ROUND_BINS = 10;

    private final Path pngFile;
    private final long seed;

    public Exercise4(Path pngFile, long seed) {
        this.pngFile = pngFile;
        this.seed = seed;
    }

    private static long max(long[] values) {
        return java.util.Arrays.stream(values).max().orElse(0);
    }

    public Report run(PrintWriter out) throws java.io.IOException {
        RetryStorm.Result full = RetryStorm.run(CLIENTS, SEED_BACKOFF, OUTAGE, BUCKET, HORIZON, seed);
        RetryStorm.Result equal = RetryStorm.run(CLIENTS, SEED_BACKOFF.withJitter(Jitter.EQUAL), OUTAGE, BUCKET,
                HORIZON, seed);
        RetryStorm.Result none = RetryStorm.run(CLIENTS, SEED_BACKOFF.withJitter(Jitter.NONE), OUTAGE, BUCKET,
                HORIZON, seed);
        double ms = BUCKET.toMillis();
        long scale = Math.max(max(Histograms.rows(full.perBucket(), ms, ROW_MILLIS, ROWS)),
                max(Histograms.rows(none.perBucket(), ms, ROW_MILLIS, ROWS)));
        Histograms.text("no jitter", none.perBucket(), ms, ROW_MILLIS, ROWS, 50, scale).forEach(out::println);
        Histograms.text("full jitter", full.perBucket(), ms, ROW_MILLIS, ROWS, 50, scale).forEach(out::println);
        long[] firstRound = RetryStorm.firstRetries(CLIENTS, SEED_BACKOFF, FIRST_ROUND_BINS, seed);
        Histograms.text("full jitter, first retry of each client", firstRound, SEED_BACKOFF.base().toMillis()
                / (double) FIRST_ROUND_BINS, SEED_BACKOFF.base().toMillis() / (double) FIRST_ROUND_BINS,
                FIRST_ROUND_BINS, 50, max(firstRound)).forEach(out::println);
        long fullest = max(firstRound);
        long emptiest = java.util.Arrays.stream(firstRound).min().orElse(0);
        Histograms.png(pngFile, full.perBucket(), none.perBucket(), ms);
        double ratio = none.peakQps() / full.peakQps();
        return new Report("Exercise 4: backoff with full jitter vs no jitter, " + CLIENTS + " clients")
                .note(String.format("base %d ms, cap %d s, outage %d s, QPS measured in %d ms buckets, seed %d",
                        SEED_BACKOFF.base().toMillis(), SEED_BACKOFF.cap().toSeconds(), OUTAGE.toSeconds(),
                        BUCKET.toMillis(), seed))
                .note(String.format("equal jitter (seed's formula): peak %.0f QPS", equal.peakQps()))
                .note("histogram written to " + pngFile.toAbsolutePath())
                .check(String.format("no jitter is a spike: %d of %d retries of one round in one %d ms bucket"
                        + " (expected all %d)", none.peakBucketCount(), CLIENTS, BUCKET.toMillis(), CLIENTS),
                        none.peakBucketCount() == CLIENTS)
                .check(String.format("full jitter spreads the first retry uniformly over [0, %d ms]: %d bins of %d ms"
                        + " hold %d..%d (expected each near %d, none empty, none over %d)", SEED_BACKOFF.base().toMillis(),
                        FIRST_ROUND_BINS, SEED_BACKOFF.base().toMillis() / FIRST_ROUND_BINS, emptiest, fullest,
                        CLIENTS / FIRST_ROUND_BINS, 2 * CLIENTS / FIRST_ROUND_BINS),
                        emptiest > 0 && fullest <= 2L * CLIENTS / FIRST_ROUND_BINS)
                .check(String.format("full jitter is spread: retries over %d buckets, fullest holds %d"
                        + " (expected <= %d)", full.busyBuckets(), full.peakBucketCount(), CLIENTS / 10),
                        full.peakBucketCount() <= CLIENTS / 10)
                .check(String.format("peak QPS without jitter %.0f / with full jitter %.0f = %.1fx (expected >= 10x)",
                        none.peakQps(), full.peakQps(), ratio), ratio >= 10.0);
    }
}
