package dev.idemkit.spring;

import dev.idemkit.ports.out.OutboxMaintenance;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The outbox's part of the service's health ({@code /actuator/health/idemkitOutbox}): UP with {@code pending} (committed
 * rows not yet sent), {@code parked} (rows that used their attempts; each blocks its ordering key until an operator
 * redrives or discards it), {@code oldestPendingAgeSeconds} and the relay's transport, and {@code alert: true} when more
 * rows are parked than {@code idemkit.outbox.parked-alert-threshold} or the transport cannot publish. Events keep
 * being appended and committed while the relay cannot publish, so neither changes the status (an operator's alert,
 * not a reason to take the instance out of service); DOWN only when the outbox cannot be read.
 */
final class IdemkitOutboxHealthIndicator implements HealthIndicator {
    private final Supplier<OutboxMaintenance.Stats> stats;
    private final Supplier<String> transport;
    private final int parkedAlertThreshold;

    IdemkitOutboxHealthIndicator(Supplier<OutboxMaintenance.Stats> stats, Supplier<String> transport,
            int parkedAlertThreshold) {
        this.stats = Objects.requireNonNull(stats, "stats");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.parkedAlertThreshold = parkedAlertThreshold;
    }

    @Override
    public Health health() {
        OutboxMaintenance.Stats s;
        try {
            s = stats.get();
        } catch (RuntimeException e) {
            return Health.down().withDetail("outbox", "idemkit's outbox table is not readable: " + e.getMessage())
                    .build();
        }
        String relay = transport.get();
        return Health.up().withDetail("pending", s.pending()).withDetail("parked", s.parked())
                .withDetail("oldestPendingAgeSeconds", s.oldestPendingAge().map(d -> d.toSeconds()).orElse(0L))
                .withDetail("transport", relay).withDetail("parkedAlertThreshold", parkedAlertThreshold)
                .withDetail("alert", s.parked() > parkedAlertThreshold || !"UP".equals(relay)).build();
    }
}
