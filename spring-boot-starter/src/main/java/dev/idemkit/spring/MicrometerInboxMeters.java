package dev.idemkit.spring;

import dev.idemkit.domain.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * The starter's meters in the service's registry: {@code idemkit.inbox.deliveries} (tags {@code consumer},
 * {@code outcome}) and {@code idemkit.dead.letters} (tag {@code queue}).
 */
final class MicrometerInboxMeters implements InboxMeters {
    static final String DELIVERIES = "idemkit.inbox.deliveries";
    static final String DEAD_LETTERS = "idemkit.dead.letters";

    private final MeterRegistry registry;

    MicrometerInboxMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void outcome(String consumer, Outcome outcome) {
        Counter.builder(DELIVERIES).description("inbox decisions per consumer and outcome")
                .tag("consumer", consumer).tag("outcome", InboxMeters.name(outcome)).register(registry).increment();
    }

    @Override
    public void deadLettered(String queue) {
        Counter.builder(DEAD_LETTERS).description("messages dead-lettered by idempotent listeners")
                .tag("queue", queue).register(registry).increment();
    }
}
