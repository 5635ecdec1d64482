package dev.idemkit.spring;

import dev.idemkit.ports.out.OutboxMaintenance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The outbox relay's meters in the service's registry: counters {@code idemkit.outbox.published} (rows confirmed by
 * the broker and marked sent), {@code idemkit.outbox.failed} (publishes that failed and will be tried again) and
 * {@code idemkit.outbox.parked} (rows parked after their last attempt); gauges, read every few seconds,
 * {@code idemkit.outbox.pending} (committed rows not yet sent), {@code idemkit.outbox.parked.rows} and
 * {@code idemkit.outbox.oldest.pending.age}.
 */
final class MicrometerOutboxMeters implements OutboxMeters {
    static final String PUBLISHED = "idemkit.outbox.published";
    static final String FAILED = "idemkit.outbox.failed";
    static final String PARKED = "idemkit.outbox.parked";
    static final String PENDING_ROWS = "idemkit.outbox.pending";
    static final String PARKED_ROWS = "idemkit.outbox.parked.rows";
    static final String OLDEST_PENDING_AGE = "idemkit.outbox.oldest.pending.age";

    private final Counter published;
    private final Counter failed;
    private final Counter parked;
    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong parkedRows = new AtomicLong();
    private final AtomicLong oldestMillis = new AtomicLong();

    MicrometerOutboxMeters(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        published = Counter.builder(PUBLISHED).description("outbox rows confirmed by the broker and marked sent")
                .register(registry);
        failed = Counter.builder(FAILED).description("outbox publishes that failed and will be tried again")
                .register(registry);
        parked = Counter.builder(PARKED).description("outbox rows parked after their last attempt").register(registry);
        Gauge.builder(PENDING_ROWS, pending, AtomicLong::get).description("committed outbox rows not yet sent")
                .register(registry);
        Gauge.builder(PARKED_ROWS, parkedRows, AtomicLong::get)
                .description("parked outbox rows (each blocks its ordering key)").register(registry);
        TimeGauge.builder(OLDEST_PENDING_AGE, oldestMillis, TimeUnit.MILLISECONDS, AtomicLong::get)
                .description("age of the oldest outbox row not yet sent").register(registry);
    }

    @Override
    public void published(int n) {
        published.increment(n);
    }

    @Override
    public void failed() {
        failed.increment();
    }

    @Override
    public void parked() {
        parked.increment();
    }

    @Override
    public void state(OutboxMaintenance.Stats stats) {
        pending.set(stats.pending());
        parkedRows.set(stats.parked());
        oldestMillis.set(stats.oldestPendingAge().orElse(Duration.ZERO).toMillis());
    }
}
