package dev.idemkit.ports.service;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.retry.RetryPolicy;
import java.util.Objects;

/**
 * A consumer's settings: its name (part of every inbox key), the retry policy, and the largest body
 * accepted (bigger ones are dead-lettered at once: 256 KiB by default, SQS's own limit).
 */
public record ConsumerSettings(ConsumerName name, RetryPolicy retryPolicy, int maxBodyBytes) {
    public static final int DEFAULT_MAX_BODY_BYTES = 256 * 1024;

    public ConsumerSettings {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        if (maxBodyBytes < 1) {
            throw new IllegalArgumentException("maxBodyBytes must be positive, got " + maxBodyBytes);
        }
    }

    public static ConsumerSettings defaults(String consumerName) {
        return new ConsumerSettings(ConsumerName.of(consumerName), RetryPolicy.defaults(), DEFAULT_MAX_BODY_BYTES);
    }

    public ConsumerSettings withRetryPolicy(RetryPolicy p) {
        return new ConsumerSettings(name, p, maxBodyBytes);
    }

    public ConsumerSettings withMaxBodyBytes(int n) {
        return new ConsumerSettings(name, retryPolicy, n);
    }
}
