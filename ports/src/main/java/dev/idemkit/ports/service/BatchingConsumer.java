package dev.idemkit.ports.service;

import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.domain.retry.RandomSource;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The consumer loop, batched (docs/ARCHITECTURE.md section 8): a transport's deliveries are collected (up to
 * {@link BatchSettings#maxBatch} or what arrived within {@link BatchSettings#linger}) and each batch is settled by the
 * one {@link BatchFlow}: keys and the effects of the new ones in ONE {@link InboxStore#runBatch} (one commit on a store
 * that {@link InboxStore#batchesAtomically batches atomically}), and only after it returned is every delivery of the
 * batch acknowledged, duplicates included.
 *
 * <p>Nothing is lost and nothing runs twice: until settled a delivery stays with the broker; a batch that throws is
 * handed delivery by delivery to the single-message {@link DeliveryFlow} under the SAME consumer name (same keys),
 * which processes, retries with backoff or dead-letters each one; a delivery whose id is reused with another body, or
 * whose id or size is unusable ({@link DeliveryFlow#rejection}, the flow's own check), goes there too and is
 * dead-lettered with the reason. {@link #onDelivery} only queues
 * (blocking when {@link BatchSettings#maxQueued} deliveries wait, so a transport without a prefetch bound is held
 * back). To stop: close this first (it hands new deliveries to the single-message path and settles what is queued),
 * then the subscription (which gives back whatever is still unsettled). Thread-safe.
 *
 * <p>A library user: {@code transport.subscribe(queue, new BatchingConsumer<>(ConsumerSettings.defaults("billing"),
 * inbox, (message, work) -> ..., BatchSettings.defaults(), random, clock, events))}.
 *
 * @param <U> the store's unit of work
 */
public final class BatchingConsumer<U extends UnitOfWork> implements DeliveryHandler, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(BatchingConsumer.class.getName());
    /** How long {@link #close} waits for the workers and the queued deliveries, all together. */
    static final Duration CLOSE_BOUND = Duration.ofSeconds(15);

    /**
     * @param maxBatch deliveries per batch at most; 1 makes every delivery go through the single-message path
     * @param linger how long a worker waits for a batch to fill before it runs what it has
     * @param workers threads running batches concurrently
     * @param maxQueued deliveries waiting at most; {@link #onDelivery} blocks past it
     */
    public record BatchSettings(int maxBatch, Duration linger, int workers, int maxQueued) {
        public BatchSettings {
            if (maxBatch < 1 || workers < 1 || maxQueued < maxBatch) {
                throw new IllegalArgumentException("maxBatch and workers must be positive and maxQueued at least"
                        + " maxBatch, got " + maxBatch + ", " + workers + ", " + maxQueued);
            }
            Objects.requireNonNull(linger, "linger");
            if (linger.isNegative()) {
                throw new IllegalArgumentException("linger must not be negative, got " + linger);
            }
        }

        /**
         * 100 deliveries or 3 ms, 2 workers, 200 waiting. Keep the waiting few: on a transport that frees its handler
         * as soon as {@link #onDelivery} returns (SQS), everything waiting here is in flight at the broker, its
         * visibility kept alive by the transport's heartbeat.
         */
        public static BatchSettings defaults() {
            return new BatchSettings(100, Duration.ofMillis(3), 2, 200);
        }

        /** {@code n} per batch, and twice that waiting. */
        public BatchSettings withMaxBatch(int n) {
            return new BatchSettings(n, linger, workers, 2 * n);
        }

        public BatchSettings withLinger(Duration d) {
            return new BatchSettings(maxBatch, d, workers, maxQueued);
        }

        public BatchSettings withWorkers(int n) {
            return new BatchSettings(maxBatch, linger, n, maxQueued);
        }
    }

    private final ConsumerSettings settings;
    private final BatchSettings batch;
    private final BatchFlow<U> batchFlow;
    private final LinkedBlockingQueue<BatchFlow.Item> queue;
    private final ReentrantLock collecting = new ReentrantLock();
    private final List<Thread> workers = new ArrayList<>();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong batched = new AtomicLong();
    private final AtomicLong viaSingle = new AtomicLong();
    private final AtomicLong runNanos = new AtomicLong();
    private final AtomicLong settleNanos = new AtomicLong();
    private volatile boolean running = true;

    /** Batches whose effects are {@code handler} once per new message. */
    public BatchingConsumer(ConsumerSettings settings, InboxStore<U> inbox, MessageHandler<? super U> handler,
            BatchSettings batch, RandomSource random, Clock clock, ConsumerEvents events) {
        this(settings, inbox, BatchHandler.eachOf(handler), handler, batch, random, clock, events);
    }

    /**
     * Batches whose effects are {@code batchHandler} for all new messages at once; {@code handler} is the same effect
     * for one message, for the single-message path.
     */
    public BatchingConsumer(ConsumerSettings settings, InboxStore<U> inbox, BatchHandler<? super U> batchHandler,
            MessageHandler<? super U> handler, BatchSettings batch, RandomSource random, Clock clock,
            ConsumerEvents events) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.batch = Objects.requireNonNull(batch, "batch");
        this.batchFlow = new BatchFlow<>(new DeliveryFlow(settings, random, clock, events), inbox, batchHandler,
                handler);
        this.queue = new LinkedBlockingQueue<>(batch.maxQueued());
        if (batch.maxBatch() > 1) {
            for (int i = 0; i < batch.workers(); i++) {
                Thread t = new Thread(this::work, "idemkit-batch-" + settings.name().value() + "-" + i);
                t.setDaemon(true);
                t.start();
                workers.add(t);
            }
        }
    }

    @Override
    public void onDelivery(Delivery delivery) {
        BatchFlow.Item pending = batchFlow.item(delivery);
        boolean eligible = batchFlow.batchable(delivery);
        if (!eligible || !running || workers.isEmpty()) {
            handOver(pending);
            return;
        }
        try {
            while (!queue.offer(pending, 100, TimeUnit.MILLISECONDS)) {
                if (!running || workers.stream().noneMatch(Thread::isAlive)) {
                    handOver(pending); // stopping, or no worker left to take it: settle it here
                    return;
                }
            }
        } catch (InterruptedException e) {
            handOver(pending);
            Thread.currentThread().interrupt();
            return;
        }
        if (!running && queue.remove(pending)) {
            handOver(pending); // queued after close() drained the queue
        }
    }

    private void work() {
        List<BatchFlow.Item> taken = new ArrayList<>(batch.maxBatch());
        // the deliveries of the current batch already settled or handed over: never twice, never none
        Set<BatchFlow.Item> settled = Collections.newSetFromMap(new IdentityHashMap<>());
        while (running || !queue.isEmpty()) {
            try {
                collect(taken);
                if (!taken.isEmpty()) {
                    settle(taken, settled);
                }
            } catch (InterruptedException e) {
                taken.forEach(this::handOver);
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable t) {
                // never let a worker die with deliveries in hand: what this batch did not settle goes single-message
                LOG.log(Level.ERROR, "decision=batch-worker-failed consumer={0} cause=\"{1}\"", settings.name().value(),
                        t.toString());
                taken.stream().filter(d -> !settled.contains(d)).forEach(this::handOver);
                if (t instanceof VirtualMachineError vme) {
                    throw vme;
                }
            } finally {
                taken.clear();
                settled.clear();
            }
        }
    }

    /** One worker collects at a time (the others run their batches meanwhile), so arrivals are not split thin. */
    private void collect(List<BatchFlow.Item> taken) throws InterruptedException {
        collecting.lockInterruptibly();
        try {
            BatchFlow.Item first = queue.poll(20, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            taken.add(first);
            queue.drainTo(taken, batch.maxBatch() - 1);
            long deadline = System.nanoTime() + batch.linger().toNanos();
            while (taken.size() < batch.maxBatch() && running) {
                BatchFlow.Item next = queue.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (next == null) {
                    break;
                }
                taken.add(next);
                queue.drainTo(taken, batch.maxBatch() - taken.size());
            }
        } finally {
            collecting.unlock();
        }
    }

    /** The batch through the one batch flow; this consumer only counts. */
    private void settle(List<BatchFlow.Item> taken, Set<BatchFlow.Item> settled) {
        BatchFlow.Result result = batchFlow.settle(taken, settled);
        viaSingle.addAndGet(result.single());
        if (result.batched() > 0) {
            batches.incrementAndGet();
            batched.addAndGet(result.batched());
            runNanos.addAndGet(result.runNanos());
            settleNanos.addAndGet(result.settleNanos());
        }
    }

    private void handOver(BatchFlow.Item p) {
        viaSingle.incrementAndGet();
        batchFlow.single(p);
    }

    /** Batches run and settled so far. */
    public long batches() {
        return batches.get();
    }

    /** Deliveries settled through a batch. */
    public long batched() {
        return batched.get();
    }

    /** Time spent in the store's batches that returned (keys, effects and commit, retries included), in total. */
    public Duration batchTime() {
        return Duration.ofNanos(runNanos.get());
    }

    /** Time spent settling the deliveries of batches that returned (acks and events), in total. */
    public Duration settleTime() {
        return Duration.ofNanos(settleNanos.get());
    }

    /** Deliveries handed to the single-message path. */
    public long viaSingle() {
        return viaSingle.get();
    }

    /**
     * Stops batching: from now on a delivery goes through the single-message path at once; the workers settle what is
     * queued, then end; anything still queued after them goes through the single-message path. Then close the
     * subscription.
     */
    @Override
    public void close() {
        running = false;
        long deadline = System.nanoTime() + CLOSE_BOUND.toNanos();
        for (Thread t : workers) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int left = 0;
        for (BatchFlow.Item p = queue.poll(); p != null; p = queue.poll()) {
            if (System.nanoTime() < deadline) {
                handOver(p);
            } else {
                p.observation().abandoned(new IllegalStateException("left unsettled at close"));
                left++; // unsettled: the subscription gives it back to the broker when it closes
            }
        }
        if (left > 0) {
            LOG.log(Level.WARNING, "consumer={0}: {1} queued deliveries left unsettled at close (the broker redelivers"
                    + " them)", settings.name().value(), left);
        }
    }
}
