package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.ConsumerEvents.Observation;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.domain.retry.RandomSource;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The consumer loop, batched (docs/ARCHITECTURE.md section 8): deliveries are collected (up to {@link BatchSettings#maxBatch} or
 * what arrived within {@link BatchSettings#linger}), their keys and the effects of the new ones run in ONE
 * {@link InboxStore#runBatch} (one commit on a store that {@link InboxStore#batchesAtomically batches atomically}),
 * and only after it returned is every delivery of the batch settled: acknowledged, duplicates included.
 *
 * <p>Nothing is lost and nothing runs twice: until settled a delivery stays with the broker; a batch that throws is
 * handed delivery by delivery to the single-message {@link ConsumerRuntime} under the SAME consumer name (same keys),
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

    /** A delivery waiting for its batch, with the observation the flow's hooks started for it on arrival. */
    private record Pending(Delivery delivery, Observation observation) {}

    private final ConsumerSettings settings;
    private final InboxStore<U> inbox;
    private final BatchHandler<? super U> batchHandler;
    private final BatchSettings batch;
    private final DeliveryFlow flow;
    private final ConsumerRuntime<U> single;
    private final LinkedBlockingQueue<Pending> queue;
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
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.batchHandler = Objects.requireNonNull(batchHandler, "batchHandler");
        Objects.requireNonNull(handler, "handler");
        this.batch = Objects.requireNonNull(batch, "batch");
        this.flow = new DeliveryFlow(settings, random, clock, events);
        this.single = new ConsumerRuntime<>(flow, inbox, handler);
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
        Pending pending = new Pending(delivery, flow.started(delivery));
        boolean eligible = flow.rejection(delivery.message()).isEmpty();
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
        List<Pending> taken = new ArrayList<>(batch.maxBatch());
        // the deliveries of the current batch already settled or handed over: never twice, never none
        Set<Pending> settled = Collections.newSetFromMap(new IdentityHashMap<>());
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
    private void collect(List<Pending> taken) throws InterruptedException {
        collecting.lockInterruptibly();
        try {
            Pending first = queue.poll(20, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            taken.add(first);
            queue.drainTo(taken, batch.maxBatch() - 1);
            long deadline = System.nanoTime() + batch.linger().toNanos();
            while (taken.size() < batch.maxBatch() && running) {
                Pending next = queue.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
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

    /** Run first, settle after: an acknowledgement never precedes the commit of its key and effect. */
    private void settle(List<Pending> taken, Set<Pending> settled) {
        List<InboxDelivery> deliveries = new ArrayList<>(taken.size());
        Map<InboxKey, Message> firstOf = new HashMap<>();
        for (Pending p : taken) {
            Message m = p.delivery().message();
            InboxKey key = flow.key(m);
            deliveries.add(new InboxDelivery(key, m.fingerprint()));
            firstOf.putIfAbsent(key, m);
        }
        long began = System.nanoTime();
        List<Outcome> outcomes;
        try {
            outcomes = runBatch(deliveries, firstOf);
        } catch (RuntimeException first) {
            // once more, whole: concurrent batches that locked rows in different orders lose one of them to a
            // deadlock, and its second run usually passes; a batch with a poison message fails again
            try {
                outcomes = runBatch(deliveries, firstOf);
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError vme) {
                    throw vme;
                }
                e.addSuppressed(first);
                LOG.log(Level.WARNING, "decision=batch-failed consumer={0} size={1} cause=\"{2}\" (each delivery goes"
                        + " through the single-message path)", settings.name().value(), taken.size(), e.toString());
                for (Pending p : taken) {
                    settled.add(p);
                    handOver(p);
                }
                return;
            }
        }
        long ran = System.nanoTime();
        Duration latency = Duration.ofNanos(ran - began);
        runNanos.addAndGet(ran - began);
        batches.incrementAndGet();
        batched.addAndGet(taken.size());
        Duration each = latency.dividedBy(taken.size());
        List<Delivery> acks = new ArrayList<>(taken.size());
        List<Pending> ackedPending = new ArrayList<>(taken.size());
        List<Outcome> acked = new ArrayList<>(taken.size());
        for (int i = 0; i < taken.size(); i++) {
            Pending p = taken.get(i);
            Outcome outcome = outcomes.get(i);
            settled.add(p);
            if (outcome instanceof Outcome.Rejected) {
                handOver(p); // the single-message path decides it again (rejected) and dead-letters it with the reason
                continue;
            }
            acks.add(p.delivery());
            ackedPending.add(p);
            acked.add(outcome);
        }
        try {
            Delivery.ackAll(acks); // one broker operation per channel where the transport can
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "decision=ack-failed consumer={0} cause=\"{1}\" (the broker redelivers what was not"
                    + " acked; the inbox makes that harmless)", settings.name().value(), e.toString());
        }
        for (int i = 0; i < acked.size(); i++) {
            Outcome outcome = acked.get(i);
            try {
                ackedPending.get(i).observation().decided(outcome.effectRan() ? Decision.PROCESSED
                        : Decision.DUPLICATE, each);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "consumer events failed: {0}", e.toString());
            }
        }
        settleNanos.addAndGet(System.nanoTime() - ran);
    }

    private List<Outcome> runBatch(List<InboxDelivery> deliveries, Map<InboxKey, Message> firstOf) {
        List<Outcome> outcomes = inbox.runBatch(deliveries, (work, fresh) -> {
            List<Message> messages = new ArrayList<>(fresh.size());
            for (InboxDelivery d : fresh) {
                messages.add(firstOf.get(d.key()));
            }
            batchHandler.handle(messages, work);
        });
        if (outcomes.size() != deliveries.size()) {
            throw new IllegalStateException(outcomes.size() + " outcomes for " + deliveries.size() + " deliveries");
        }
        return outcomes;
    }

    private void handOver(Pending p) {
        viaSingle.incrementAndGet();
        try {
            single.onDelivery(p.delivery(), p.observation());
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "decision=single-failed consumer={0} cause=\"{1}\" (left unsettled: the broker"
                    + " redelivers it)", settings.name().value(), e.toString());
        }
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
        for (Pending p = queue.poll(); p != null; p = queue.poll()) {
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
