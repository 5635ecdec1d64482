package dev.idemkit.domain.deadletter;

/**
 * When a dead-letter queue deserves a human: when it holds more than {@code threshold} messages.
 * Zero is the normal state of a DLQ.
 */
public record AlertPolicy(int threshold) {
    public static final int DEFAULT_THRESHOLD = 10;

    public AlertPolicy {
        if (threshold < 0) {
            throw new IllegalArgumentException("alert threshold must be >= 0, got " + threshold);
        }
    }

    public static AlertPolicy defaults() {
        return new AlertPolicy(DEFAULT_THRESHOLD);
    }

    /** True when {@code depth} exceeds the threshold: 11 alerts at the default, 10 does not. */
    public boolean shouldAlert(long depth) {
        return depth > threshold;
    }
}
