package dev.idemkit.spring;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Outcome;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import java.time.Duration;
import java.util.Objects;

/**
 * The idempotent listeners' decisions as the starter's meters: processed, duplicate and stale deliveries per consumer,
 * dead letters per queue. Retries are not counted (each comes back as a delivery of its own).
 */
final class ListenerMeters implements ConsumerEvents {
    private final InboxMeters meters;

    ListenerMeters(InboxMeters meters) {
        this.meters = Objects.requireNonNull(meters, "meters");
    }

    @Override
    public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
        switch (decision) {
            case PROCESSED -> meters.outcome(consumer.value(), Outcome.PROCESSED);
            case DUPLICATE -> meters.outcome(consumer.value(), Outcome.DUPLICATE);
            case STALE -> meters.outcome(consumer.value(), Outcome.STALE);
            default -> { }
        }
    }

    @Override
    public Observation started(ConsumerName consumer, Delivery delivery) {
        String queue = delivery.message().originQueue();
        return (decision, storeLatency) -> {
            if (decision == Decision.DEAD_LETTERED) {
                meters.deadLettered(queue);
            } else {
                onDecision(consumer, decision, storeLatency);
            }
        };
    }
}
