package dev.idemkit.app.metrics;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMaintenance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The app's meters: {@code idemkit_messages_total{consumer,decision}} (processed, duplicate, stale,
 * retried, dead_lettered), {@code idemkit_store_latency_seconds{consumer}},
 * {@code idemkit_dlq_depth{queue}}, {@code idemkit_http_requests_total{outcome}} (executed, replayed,
 * conflict, mismatch, bad_request, unauthorized); the outbox's {@code idemkit_outbox_published_total},
 * {@code idemkit_outbox_failed_total}, {@code idemkit_outbox_parked_total} and the gauges {@code idemkit_outbox_pending},
 * {@code idemkit_outbox_parked_rows}, {@code idemkit_outbox_oldest_pending_age_seconds}; retention's
 * {@code idemkit_retention_deleted_total{table}} and the gauges {@code idemkit_retention_oldest_inbox_key_age_seconds}
 * (how far back the dedup window reaches) and {@code idemkit_retention_caught_up} (1 when the last run caught up; 0
 * when it was stopped first or failed), and {@code idemkit_retention_failures_total}.
 */
public final class Metrics implements ConsumerEvents, OutboxEvents {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<String, AtomicLong> dlqDepths = new ConcurrentHashMap<>();
    // meters built once per tag combination, not on every message or request
    private final Map<ConsumerName, Map<Decision, Counter>> messages = new ConcurrentHashMap<>();
    private final Map<ConsumerName, Timer> storeLatencies = new ConcurrentHashMap<>();
    private final Map<String, Counter> httpOutcomes = new ConcurrentHashMap<>();
    private final Counter outboxPublished = Counter.builder("idemkit_outbox_published").register(registry);
    private final Counter outboxFailed = Counter.builder("idemkit_outbox_failed").register(registry);
    private final Counter outboxParked = Counter.builder("idemkit_outbox_parked").register(registry);
    private final AtomicLong outboxPending = new AtomicLong();
    private final AtomicLong outboxParkedRows = new AtomicLong();
    private final AtomicLong outboxOldestMillis = new AtomicLong();
    private final Map<String, Counter> retentionDeleted = new ConcurrentHashMap<>();
    private final AtomicLong oldestInboxKeyMillis = new AtomicLong();
    private final AtomicLong retentionCaughtUp = new AtomicLong(1);
    private final Counter retentionFailures = Counter.builder("idemkit_retention_failures").register(registry);

    public Metrics() {
        Gauge.builder("idemkit_outbox_pending", outboxPending, AtomicLong::get).register(registry);
        Gauge.builder("idemkit_outbox_parked_rows", outboxParkedRows, AtomicLong::get).register(registry);
        Gauge.builder("idemkit_outbox_oldest_pending_age_seconds", outboxOldestMillis, m -> m.get() / 1000.0)
                .register(registry);
        Gauge.builder("idemkit_retention_oldest_inbox_key_age_seconds", oldestInboxKeyMillis, m -> m.get() / 1000.0)
                .register(registry);
        Gauge.builder("idemkit_retention_caught_up", retentionCaughtUp, AtomicLong::get).register(registry);
    }

    /** A retention run that failed: it did not catch up. */
    public void retentionFailed() {
        retentionCaughtUp.set(0);
        retentionFailures.increment();
    }

    /** One retention run: rows deleted per table, the oldest inbox key kept, whether it caught up. */
    public void retention(Map<String, Long> deleted, java.util.Optional<Duration> oldestInboxKey, boolean caughtUp) {
        // the gauges first: whoever sees a run's counts sees its gauges too
        oldestInboxKeyMillis.set(oldestInboxKey.map(Duration::toMillis).orElse(0L));
        retentionCaughtUp.set(caughtUp ? 1 : 0);
        deleted.forEach((table, n) -> retentionDeleted.computeIfAbsent(table, t -> Counter
                .builder("idemkit_retention_deleted").tag("table", t).register(registry)).increment(n));
    }

    @Override
    public void published(int n) {
        outboxPublished.increment(n);
    }

    @Override
    public void failed() {
        outboxFailed.increment();
    }

    @Override
    public void parked() {
        outboxParked.increment();
    }

    /** The outbox's counts, read by serve's scheduler. */
    public void outboxStats(OutboxMaintenance.Stats stats) {
        outboxPending.set(stats.pending());
        outboxParkedRows.set(stats.parked());
        outboxOldestMillis.set(stats.oldestPendingAge().map(Duration::toMillis).orElse(0L));
    }

    @Override
    public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
        messages.computeIfAbsent(consumer, c -> new ConcurrentHashMap<>()).computeIfAbsent(decision,
                d -> Counter.builder("idemkit_messages").tag("consumer", consumer.value())
                        .tag("decision", d.name().toLowerCase(Locale.ROOT)).register(registry)).increment();
        if (!storeLatency.isZero()) {
            storeLatencies.computeIfAbsent(consumer, c -> Timer.builder("idemkit_store_latency")
                    .tag("consumer", c.value()).register(registry)).record(storeLatency);
        }
    }

    public void dlqDepth(String queue, long depth) {
        dlqDepths.computeIfAbsent(queue, q -> {
            AtomicLong holder = new AtomicLong();
            Gauge.builder("idemkit_dlq_depth", holder, AtomicLong::get).tag("queue", q).register(registry);
            return holder;
        }).set(depth);
    }

    public void httpOutcome(String outcome) {
        httpOutcomes.computeIfAbsent(outcome, o -> Counter.builder("idemkit_http_requests").tag("outcome", o)
                .register(registry)).increment();
    }

    public double count(String name, String tagKey, String tagValue) {
        Counter c = registry.find(name).tag(tagKey, tagValue).counter();
        return c == null ? 0 : c.count();
    }

    /** Prometheus text exposition. */
    public String scrape() {
        return registry.scrape();
    }
}
