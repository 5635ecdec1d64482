package dev.idemkit.adapters.sqs;

import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.TransportException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The transport's pipelined publish ({@link SqsMessageTransport#publishAsync}): publishes wait in a lane per queue and
 * go out as {@code SendMessageBatch} calls of up to ten, each caller's future completed by its own entry's result (a
 * failed entry fails only its own future). A FIFO queue's lane has one call under way at a time, so its messages reach
 * SQS in call order (SQS keeps a group's order within a batch and across sequential calls); a standard queue's lane
 * runs up to {@value #STANDARD_CALLS} calls at once. At most {@value #MAX_IN_FLIGHT} publishes wait or are under way;
 * a caller past that waits for a slot.
 */
final class SqsBatchSender implements AutoCloseable {
    static final int MAX_IN_FLIGHT = 1024;
    static final int STANDARD_CALLS = 4;

    /** Sends one chunk of at most ten; returns, per index of the chunk, why SQS refused that entry. */
    @FunctionalInterface
    interface Chunk {
        Map<Integer, String> send(String queue, List<OutgoingMessage> chunk);
    }

    private record Pending(OutgoingMessage message, CompletableFuture<Void> done) {}

    private final Chunk chunk;
    private final int batchMax;
    private final Semaphore slots = new Semaphore(MAX_IN_FLIGHT);
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();
    private final ExecutorService calls;
    private volatile boolean closed;

    SqsBatchSender(Chunk chunk, int batchMax) {
        this.chunk = chunk;
        this.batchMax = batchMax;
        AtomicInteger n = new AtomicInteger();
        this.calls = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "idemkit-sqs-send-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    CompletableFuture<Void> submit(String queue, OutgoingMessage message) {
        if (closed) {
            return CompletableFuture.failedFuture(new TransportException("the transport is closed: " + message.id()
                    + " was not published"));
        }
        try {
            slots.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CompletableFuture.failedFuture(new TransportException("interrupted before " + message.id()
                    + " was published", e));
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        done.whenComplete((ok, e) -> slots.release());
        Lane lane = lanes.computeIfAbsent(queue, q -> new Lane(q, SqsQueues.isFifo(q) ? 1 : STANDARD_CALLS));
        lane.waiting.add(new Pending(message, done));
        lane.kick();
        return done;
    }

    /** One queue's waiting publishes and the calls taking them. */
    private final class Lane {
        private final String queue;
        private final int maxCalls;
        private final ConcurrentLinkedQueue<Pending> waiting = new ConcurrentLinkedQueue<>();
        private final AtomicInteger calling = new AtomicInteger();

        Lane(String queue, int maxCalls) {
            this.queue = queue;
            this.maxCalls = maxCalls;
        }

        /** Starts one more call loop if the lane has fewer than its maximum. */
        void kick() {
            for (int c = calling.get(); c < maxCalls; c = calling.get()) {
                if (calling.compareAndSet(c, c + 1)) {
                    try {
                        calls.execute(this::drain);
                    } catch (RuntimeException e) { // the executor is shut down: the transport closed
                        calling.decrementAndGet();
                        failWaiting("the transport is closed");
                    }
                    return;
                }
            }
        }

        private void drain() {
            while (true) {
                List<Pending> batch = new ArrayList<>(batchMax);
                Pending next;
                while (batch.size() < batchMax && (next = waiting.poll()) != null) {
                    batch.add(next);
                }
                if (batch.isEmpty()) {
                    calling.decrementAndGet();
                    // a publish added after the poll and before the decrement saw this loop still running: take it
                    if (waiting.isEmpty() || !reclaim()) {
                        return;
                    }
                    continue;
                }
                send(batch);
            }
        }

        private boolean reclaim() {
            for (int c = calling.get(); c < maxCalls; c = calling.get()) {
                if (calling.compareAndSet(c, c + 1)) {
                    return true;
                }
            }
            return false;
        }

        private void send(List<Pending> batch) {
            List<OutgoingMessage> messages = new ArrayList<>(batch.size());
            batch.forEach(p -> messages.add(p.message()));
            Map<Integer, String> refused;
            try {
                refused = chunk.send(queue, messages);
            } catch (RuntimeException | Error e) {
                TransportException failure = new TransportException("batch publish to " + queue + " was not"
                        + " confirmed (outcome unknown: SQS may have taken some): " + e.getMessage(), e);
                batch.forEach(p -> p.done().completeExceptionally(failure));
                if (e instanceof VirtualMachineError vme) {
                    throw vme;
                }
                return;
            }
            for (int i = 0; i < batch.size(); i++) {
                Pending p = batch.get(i);
                String why = refused.get(i);
                if (why == null) {
                    p.done().complete(null);
                } else {
                    p.done().completeExceptionally(new TransportException("SQS refused " + p.message().id() + " to "
                            + queue + ": " + why));
                }
            }
        }

        private void failWaiting(String why) {
            for (Pending p = waiting.poll(); p != null; p = waiting.poll()) {
                p.done().completeExceptionally(new TransportException(why + ": " + p.message().id()
                        + " was not published"));
            }
        }
    }

    /** Stops taking publishes, lets the calls under way finish (a few seconds at most), fails what still waits. */
    @Override
    public void close() {
        closed = true;
        calls.shutdown();
        try {
            calls.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lanes.values().forEach(l -> l.failWaiting("the transport closed"));
    }
}
