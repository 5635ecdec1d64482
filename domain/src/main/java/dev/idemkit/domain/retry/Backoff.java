package dev.idemkit.domain.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * Exponential backoff: {@code ceiling(attempt) = min(cap, base * 2^attempt)}, then {@link Jitter}.
 *
 * <p>Attempts count from 0: attempt 0 is the first retry, whose ceiling is {@code base}. The
 * arithmetic is in nanoseconds and saturates at the cap; it never overflows, whatever the attempt.
 */
public record Backoff(Duration base, Duration cap, Jitter jitter) {
    public Backoff {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(cap, "cap");
        Objects.requireNonNull(jitter, "jitter");
        if (base.isNegative() || base.isZero()) {
            throw new IllegalArgumentException("backoff base must be positive, got " + base);
        }
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff cap " + cap + " is below its base " + base);
        }
    }

    public static Backoff exponential(Duration base, Duration cap, Jitter jitter) {
        return new Backoff(base, cap, jitter);
    }

    /** 1 s base, 60 s cap, full jitter. */
    public static Backoff defaults() {
        return new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), Jitter.FULL);
    }

    public Backoff withJitter(Jitter other) {
        return new Backoff(base, cap, other);
    }

    /** {@code min(cap, base * 2^attempt)}, saturating at the cap. */
    public Duration ceiling(int attempt) {
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt counts from 0, got " + attempt);
        }
        long capNanos = saturatedNanos(cap);
        long baseNanos = saturatedNanos(base);
        if (attempt >= 63 || baseNanos > (capNanos >> attempt)) {
            return Duration.ofNanos(capNanos);
        }
        return Duration.ofNanos(Math.min(capNanos, baseNanos << attempt));
    }

    /**
     * The delay before retry number {@code attempt} (counting from 0).
     *
     * @param random a draw from [0, 1); ignored by {@link Jitter#NONE}
     */
    public Duration delay(int attempt, RandomSource random) {
        long ceiling = ceiling(attempt).toNanos();
        return switch (jitter) {
            case NONE -> Duration.ofNanos(ceiling);
            case FULL -> Duration.ofNanos(scale(ceiling, draw(random)));
            case EQUAL -> {
                long half = ceiling / 2;
                yield Duration.ofNanos(half + scale(ceiling - half, draw(random)));
            }
        };
    }

    private static double draw(RandomSource random) {
        double r = random.nextDouble();
        if (!(r >= 0.0 && r < 1.0)) {
            throw new IllegalArgumentException("random source returned " + r + ", outside [0, 1)");
        }
        return r;
    }

    private static long scale(long nanos, double fraction) {
        return Math.min(nanos, (long) (nanos * fraction));
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException overflow) {
            return Long.MAX_VALUE;
        }
    }
}
