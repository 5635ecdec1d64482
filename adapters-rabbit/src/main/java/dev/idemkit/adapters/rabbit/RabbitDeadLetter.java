package dev.idemkit.adapters.rabbit;

import dev.idemkit.ports.out.DeadLetterEntry;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A dead letter as RabbitMQ holds it: the port's entry (original message, origin queue, reason,
 * every attempt) plus the broker's own {@code x-death} trail, most recent first, and the earlier
 * {@code x-death} entries that republished copies moved out of {@code x-death} so that RabbitMQ's
 * cycle detection could not drop them ({@code x-idemkit-earlier-deaths}, most recent first).
 */
public record RabbitDeadLetter(DeadLetterEntry entry, List<BrokerDeath> brokerDeaths, List<BrokerDeath> earlierDeaths) {
    public RabbitDeadLetter {
        Objects.requireNonNull(entry, "entry");
        brokerDeaths = List.copyOf(brokerDeaths);
        earlierDeaths = List.copyOf(earlierDeaths);
    }

    /**
     * One {@code x-death} entry: the broker dead-lettered the message {@code count} times from
     * {@code queue} for {@code reason} (expired, rejected, maxlen), last at {@code time}.
     */
    public record BrokerDeath(String queue, String reason, long count, Instant time, String exchange,
            List<String> routingKeys) {
        public BrokerDeath {
            routingKeys = List.copyOf(routingKeys);
        }
    }
}
