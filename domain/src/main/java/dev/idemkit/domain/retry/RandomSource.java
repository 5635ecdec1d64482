package dev.idemkit.domain.retry;

/** A source of uniform random numbers in [0, 1), injected so that backoff stays a pure function. */
@FunctionalInterface
public interface RandomSource {
    /** @return a number in [0, 1) */
    double nextDouble();

    /** A source that always returns {@code value}; for tests and for the deterministic NONE case. */
    static RandomSource fixed(double value) {
        if (!(value >= 0.0 && value < 1.0)) {
            throw new IllegalArgumentException("random value must lie in [0, 1), got " + value);
        }
        return () -> value;
    }
}
