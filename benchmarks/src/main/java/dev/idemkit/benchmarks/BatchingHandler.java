package dev.idemkit.benchmarks;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer that settles many deliveries per transaction. {@link #onDelivery} only queues the delivery
 * (the transport's thread is free at once, so the prefetch window keeps filling); worker threads take up
 * to {@code maxBatch} deliveries (or what arrived within {@code linger}; one worker collects at a time
 * while the others commit), run the {@link BatchStep} —
 * inbox keys and effects of the new ones in ONE transaction — and only after it returned (committed)
 * ack every delivery of the batch, duplicates included.
 *
 * <p>Nothing is lost: a batch whose step throws is handed, delivery by delivery, to the per-message
 * {@code fallback} (the ports consumer runtime under the SAME consumer name, so the keys are the same):
 * it processes, retries with backoff or dead-letters each one. A delivery whose outcome is
 * {@link Outcome.Rejected} (an id reused with another body), whose id is unusable or whose body is too
 * big also goes to the fallback, which dead-letters it with the reason. Until settled, a delivery stays
 * with the broker. Thread-safe.
 */
public final class BatchingHandler implements DeliveryHandler, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BatchingHandler.class);

    /** Runs one batch in ONE transaction and commits it; one outcome per message, in input order. */
    @FunctionalInterface
    public interface BatchStep {
        List<Outcome> commit(List<Message> messages) throws Exception;
    }

    /**
     * @param maxBatch deliveries per transaction at most
     * @param linger how long a worker waits for a batch to fill before it commits what it has
     * @param workers threads committing batches concurrently
     * @param maxBodyBytes bodies above this go to the fallback (which dead-letters them)
     */
    public record Settings(int maxBatch, Duration linger, int workers, int maxBodyBytes) {
        public Settings {
            if (maxBatch < 1 || workers < 1 || maxBodyBytes < 1) {
                throw new IllegalArgumentException("maxBatch, workers and maxBodyBytes must be positive");
            }
            Objects.requireNonNull(linger, "linger");
        }
    }

    private final BatchStep step;
    private final DeliveryHandler fallback;
    private final Settings settings;
    private final LinkedBlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
    private final ReentrantLock collecting = new ReentrantLock();
    private final List<Thread> workers = new ArrayList<>();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong batched = new AtomicLong();
    private final AtomicLong viaFallback = new AtomicLong();
    private final AtomicLong stepNanos = new AtomicLong();
    private final AtomicLong ackNanos = new AtomicLong();
    private volatile boolean running = true;

    public BatchingHandler(BatchStep step, DeliveryHandler fallback, Settings settings) {
        this.step = Objects.requireNonNull(step, "step");
        this.fallback = Objects.requireNonNull(fallback, "fallback");
        this.settings = Objects.requireNonNull(settings, "settings");
        for (int i = 0; i < settings.workers(); i++) {
            Thread t = new Thread(this::work, "idemkit-batch-" + i);
            t.setDaemon(true);
            t.start();
            workers.add(t);
        }
    }

    @Override
    public void onDelivery(Delivery delivery) {
        Message m = delivery.message();
        boolean eligible = m.rawId() != null && KeyRules.isValid(m.rawId()) && m.size() <= settings.maxBodyBytes();
        if (!eligible || !running) {
            handOver(delivery);
            return;
        }
        queue.add(delivery);
    }

    private void work() {
        List<Delivery> batch = new ArrayList<>(settings.maxBatch());
        while (running || !queue.isEmpty()) {
            try {
                collect(batch);
                if (!batch.isEmpty()) {
                    settle(batch);
                }
            } catch (InterruptedException e) {
                batch.forEach(this::handOver);
                Thread.currentThread().interrupt();
                return;
            } finally {
                batch.clear();
            }
        }
    }

    /**
     * One worker collects at a time (the others commit meanwhile), so that concurrent workers do not
     * split the arrivals into small batches: up to {@code maxBatch}, waiting at most {@code linger}
     * after the first delivery.
     */
    private void collect(List<Delivery> batch) throws InterruptedException {
        collecting.lockInterruptibly();
        try {
            Delivery first = queue.poll(20, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            batch.add(first);
            queue.drainTo(batch, settings.maxBatch() - 1);
            long deadline = System.nanoTime() + settings.linger().toNanos();
            while (batch.size() < settings.maxBatch()) {
                Delivery next = queue.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (next == null) {
                    break;
                }
                batch.add(next);
                queue.drainTo(batch, settings.maxBatch() - batch.size());
            }
        } finally {
            collecting.unlock();
        }
    }

    /** Commit first, settle after: an ack never precedes the commit of its key and effect. */
    void settle(List<Delivery> batch) {
        List<Outcome> outcomes;
        long began = System.nanoTime();
        try {
            outcomes = step.commit(batch.stream().map(Delivery::message).toList());
            stepNanos.addAndGet(System.nanoTime() - began);
            if (outcomes.size() != batch.size()) {
                throw new IllegalStateException(outcomes.size() + " outcomes for " + batch.size() + " deliveries");
            }
        } catch (Exception e) {
            LOG.warn("decision=batch-failed size={} cause=\"{}\" (each delivery goes through the per-message path)",
                    batch.size(), e.toString());
            batch.forEach(this::handOver);
            return;
        }
        batches.incrementAndGet();
        batched.addAndGet(batch.size());
        long acking = System.nanoTime();
        for (int i = 0; i < batch.size(); i++) {
            Delivery d = batch.get(i);
            if (outcomes.get(i) instanceof Outcome.Rejected) {
                handOver(d);
            } else {
                try {
                    d.ack();
                } catch (RuntimeException e) {
                    LOG.warn("decision=ack-failed cause=\"{}\" (the broker redelivers it; the inbox makes that harmless)",
                            e.toString());
                }
            }
        }
        ackNanos.addAndGet(System.nanoTime() - acking);
    }

    private void handOver(Delivery d) {
        viaFallback.incrementAndGet();
        try {
            fallback.onDelivery(d);
        } catch (RuntimeException e) {
            LOG.error("decision=fallback-failed cause=\"{}\" (left unsettled: the broker redelivers it)", e.toString());
        }
    }

    /** Batches committed so far. */
    public long batches() {
        return batches.get();
    }

    /** Deliveries settled through a committed batch. */
    public long batched() {
        return batched.get();
    }

    /** Time spent in committed batch steps, summed over workers. */
    public Duration stepTime() {
        return Duration.ofNanos(stepNanos.get());
    }

    /** Time spent settling after commits, summed over workers. */
    public Duration ackTime() {
        return Duration.ofNanos(ackNanos.get());
    }

    /** Deliveries handed to the per-message path. */
    public long viaFallback() {
        return viaFallback.get();
    }

    /**
     * Stops taking work; the workers settle what is queued, then end; anything still queued after them
     * goes through the per-message path. Close the subscription first.
     */
    @Override
    public void close() {
        running = false;
        for (Thread t : workers) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (Delivery d = queue.poll(); d != null; d = queue.poll()) {
            handOver(d);
        }
    }
}
