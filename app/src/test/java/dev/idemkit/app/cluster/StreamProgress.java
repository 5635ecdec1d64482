package dev.idemkit.app.cluster;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;

/**
 * Samples a processed count every millisecond while a cluster loses a node: the longest stretch without progress that
 * ended in the 30 s after a kill, and for comparison the longest before the first kill (from the first processed
 * message on).
 */
final class StreamProgress {
    private static final long WINDOW = Duration.ofSeconds(30).toNanos();
    private final List<Long> kills = new CopyOnWriteArrayList<>();
    private final AtomicLong longestAfter = new AtomicLong();
    private final AtomicLong longestBefore = new AtomicLong();
    private volatile boolean running = true;

    StreamProgress(DoubleSupplier processed) {
        Thread sampler = new Thread(() -> {
            double last = -1;
            long lastChange = System.nanoTime();
            while (running) {
                double now = processed.getAsDouble();
                long t = System.nanoTime();
                if (now != last) {
                    long gap = last <= 0 ? 0 : t - lastChange;
                    if (kills.isEmpty()) {
                        longestBefore.accumulateAndGet(gap, Math::max);
                    } else if (kills.stream().anyMatch(k -> t >= k && t - k <= WINDOW)) {
                        longestAfter.accumulateAndGet(gap, Math::max);
                    }
                    last = now;
                    lastChange = t;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "cluster-progress");
        sampler.setDaemon(true);
        sampler.start();
    }

    void killedAt(long nanos) {
        kills.add(nanos);
    }

    void stop() {
        running = false;
    }

    long longestAfterKillMillis() {
        return longestAfter.get() / 1_000_000;
    }

    long longestBeforeKillMillis() {
        return longestBefore.get() / 1_000_000;
    }
}
