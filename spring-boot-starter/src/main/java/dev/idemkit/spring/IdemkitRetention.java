package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresRetention;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs {@link PostgresRetention} (the same loop as {@code idemkit serve}) every {@code idemkit.retention.every} on a
 * daemon thread of its own, from the service's start to its stop; a run in progress stops before its next batch when
 * the service stops. A failed run is logged and the next one tries again.
 */
final class IdemkitRetention implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitRetention.class);

    private final PostgresRetention retention;
    private final PostgresRetention.Policy policy;
    private final Duration every;
    private final RetentionMeters meters;
    private ScheduledExecutorService executor;
    private volatile boolean running;

    IdemkitRetention(PostgresRetention retention, PostgresRetention.Policy policy, Duration every,
            RetentionMeters meters) {
        this.retention = Objects.requireNonNull(retention, "retention");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.every = Objects.requireNonNull(every, "every");
        this.meters = Objects.requireNonNull(meters, "meters");
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "idemkit-retention");
            t.setDaemon(true);
            return t;
        });
        executor.scheduleWithFixedDelay(this::runOnce, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * One run now, on the caller's thread; a failure is logged and counted, not thrown (an exception out of a scheduled
     * task would cancel every later run; only the JVM's own failures are let through).
     */
    void runOnce() {
        try {
            PostgresRetention.Report report = retention.purge(policy, () -> running);
            meters.ran(report, retention.oldest());
        } catch (RuntimeException | LinkageError | AssertionError e) {
            meters.failed();
            LOG.warn("idemkit retention failed (the next run tries again): {}", e.toString());
        }
    }

    @Override
    public synchronized void stop() {
        running = false;
        if (executor != null) {
            executor.shutdownNow();
            try {
                executor.awaitTermination(10, TimeUnit.SECONDS); // a batch in flight is one short statement
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            executor = null;
        }
    }

    /** {@code 7d}, {@code 24h}, {@code 10m}, {@code 30s}, {@code 10ms}: the largest unit that divides it. */
    static String human(Duration d) {
        long ms = d.toMillis();
        long[] units = {86_400_000L, 3_600_000L, 60_000L, 1000L};
        String[] names = {"d", "h", "m", "s"};
        for (int i = 0; i < units.length; i++) {
            if (ms != 0 && ms % units[i] == 0) {
                return ms / units[i] + names[i];
            }
        }
        return ms + "ms";
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
