package dev.idemkit.app.exercises;

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

    private final Path pngFile;
    private final long seed;

    public Exercise4(Path pngFile, long seed) {
        this.pngFile = pngFile;
        this.seed = seed;
    }

    public Report run(PrintWriter out) throws java.io.IOException {
        RetryStorm.Result full = RetryStorm.run(CLIENTS, SEED_BACKOFF, OUTAGE, BUCKET, HORIZON, seed);
        RetryStorm.Result equal = RetryStorm.run(CLIENTS, SEED_BACKOFF.withJitter(Jitter.EQUAL), OUTAGE, BUCKET,
                HORIZON, seed);
        RetryStorm.Result none = RetryStorm.run(CLIENTS, SEED_BACKOFF.withJitter(Jitter.NONE), OUTAGE, BUCKET,
                HORIZON, seed);
        double ms = BUCKET.toMillis();
        Histograms.text("full jitter", full.perBucket(), ms, 24, 50).forEach(out::println);
        Histograms.text("no jitter", none.perBucket(), ms, 24, 50).forEach(out::println);
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
                .check(String.format("full jitter is spread: retries over %d buckets, fullest holds %d"
                        + " (expected <= %d)", full.busyBuckets(), full.peakBucketCount(), CLIENTS / 10),
                        full.peakBucketCount() <= CLIENTS / 10)
                .check(String.format("peak QPS without jitter %.0f / with full jitter %.0f = %.1fx (expected >= 10x)",
                        none.peakQps(), full.peakQps(), ratio), ratio >= 10.0);
    }
}
