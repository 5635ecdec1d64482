package dev.idemkit.spring;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * idemkit's part of the service's health ({@code /actuator/health/idemkit}): DOWN when idemkit's inbox table cannot
 * be read (the database is unreachable, or the migrations never ran), or when the idempotent listeners' settle paths
 * cannot publish (the broker blocks publishing during a resource alarm: no retry or dead letter can be published, and
 * the listeners' deliveries wait unsettled, in the words of the RabbitMQ transport's own health; the dead-letter depths
 * are not read then, as the broker does not answer that connection); otherwise UP, with the depth of every
 * dead-letter queue the idempotent listeners use and whether one is above the alert threshold ({@code alert: true}).
 * A full dead-letter queue is an operator's alert, not a reason to take the instance out of service, so it does not
 * change the status. Never reads a message.
 */
final class IdemkitHealthIndicator implements HealthIndicator {
    static final String PROBE = "SELECT 1 FROM processed_messages LIMIT 1";

    private final DataSource dataSource;
    private final Supplier<Map<String, Long>> deadLetterDepths;
    private final Supplier<String> transport;
    private final int alertThreshold;

    IdemkitHealthIndicator(DataSource dataSource, Supplier<Map<String, Long>> deadLetterDepths,
            Supplier<String> transport, int alertThreshold) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.deadLetterDepths = Objects.requireNonNull(deadLetterDepths, "deadLetterDepths");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.alertThreshold = alertThreshold;
    }

    @Override
    public Health health() {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(PROBE)) {
            ps.setQueryTimeout(5);
            ps.executeQuery().close();
        } catch (SQLException e) {
            return Health.down().withDetail("store", "idemkit's inbox table is not readable: " + e.getMessage()).build();
        }
        String settle = transport.get();
        Health.Builder health = ("UP".equals(settle) ? Health.up() : Health.down()).withDetail("store", "reachable")
                .withDetail("transport", settle);
        if (!"UP".equals(settle)) {
            // the depths are read over the settle connection, which the broker stops reading during a resource alarm:
            // asking would hold this health check for the RPC timeout (10 s) per queue
            return health.withDetail("deadLetters", "not read while the settle connection is down").build();
        }
        Map<String, Long> depths = new TreeMap<>(deadLetterDepths.get());
        if (!depths.isEmpty()) {
            health.withDetail("deadLetters", depths).withDetail("alertThreshold", alertThreshold)
                    .withDetail("alert", depths.values().stream().anyMatch(d -> d > alertThreshold));
        }
        return health.build();
    }
}
