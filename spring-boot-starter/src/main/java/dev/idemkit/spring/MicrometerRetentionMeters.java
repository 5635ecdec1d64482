package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresRetention;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Retention's meters in the service's registry: {@code idemkit.retention.deleted} (tag {@code table}), and after each
 * run {@code idemkit.retention.oldest.inbox.key.age} (how far back the dedup window reaches: near
 * {@code idemkit.retention.inbox} when retention keeps up) and {@code idemkit.retention.caught.up} (0 when a run was
 * stopped first or failed); {@code idemkit.retention.failures} counts the runs that failed.
 */
final class MicrometerRetentionMeters implements RetentionMeters {
    static final String DELETED = "idemkit.retention.deleted";
    static final String OLDEST_INBOX_KEY_AGE = "idemkit.retention.oldest.inbox.key.age";
    static final String CAUGHT_UP = "idemkit.retention.caught.up";
    static final String FAILURES = "idemkit.retention.failures";

    private final MeterRegistry registry;
    private final AtomicLong oldestMillis = new AtomicLong();
    private final AtomicLong caughtUp = new AtomicLong(1);

    MicrometerRetentionMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        TimeGauge.builder(OLDEST_INBOX_KEY_AGE, oldestMillis, TimeUnit.MILLISECONDS, AtomicLong::get)
                .description("age of the oldest inbox key kept, after the last retention run").register(registry);
        Gauge.builder(CAUGHT_UP, caughtUp, AtomicLong::get)
                .description("1 when the last retention run caught up, 0 when it was stopped first").register(registry);
    }

    @Override
    public void ran(PostgresRetention.Report report, PostgresRetention.Oldest oldest) {
        // the gauges first: whoever sees a run's counts sees its gauges too
        oldestMillis.set(oldest.inboxAge().toMillis());
        caughtUp.set(report.caughtUp() ? 1 : 0);
        deleted("processed_messages", report.processedMessages());
        deleted("idempotency_records", report.idempotencyRecords());
        deleted("outbox_messages", report.sentOutbox());
    }

    @Override
    public void failed() {
        caughtUp.set(0);
        Counter.builder(FAILURES).description("retention runs that failed").register(registry).increment();
    }

    private void deleted(String table, long n) {
        Counter.builder(DELETED).description("rows deleted by retention").tag("table", table).register(registry)
                .increment(n);
    }
}
