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
 * runs up to {@value #STANDARD_CALLS} calls at once. A batch also stays under {@value #MAX_BATCH_BYTES} bytes (a
 * message bigger than that goes alone, and only it fails). At most {@value #MAX_IN_FLIGHT} publishes wait or are
 * under way; a caller past that waits for a slot. A caller's callbacks run on the lane's thread: keep them short.
 */
final class SqsBatchSender implements AutoCloseable {
    static final int MAX_IN_FLIGHT = 1024;
    static final int STANDARD_CALLS = 4;
    /** The classic limit of a {@code SendMessageBatch} request (bodies and attributes together); a batch stays under. */
    static final long MAX_BATCH_BYTES = 256 * 1024;

    /** Sends one chunk of at most ten; returns, per index of the chunk, why SQS refused that entry. */
    @FunctionalInterface
    interface Chunk {
        Map<Integer, String> send(String queue, List<OutgoingMessage> chunk);
    }

    private record Pending(OutgoingMessage message, CompletableFuture<Void> done) {}

    private final Chunk chunk;
    private final int batchMax;
    private final Semaphore slots;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();
    private final ExecutorService calls;
    private volatile boolean closed;

    SqsBatchSender(Chunk chunk, int batchMax) {
        this(chunk, batchMax, MAX_IN_FLIGHT);
    }

    SqsBatchSender(Chunk chunk, int batchMax, int maxInFlight) {
        this.slots = new Semaphore(maxInFlight);
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
        Lane lane = lanes.computeIfAbsent(queue, q -> new Lane(q, SqsQueues.isFifo(q) ? 1 : STANDARD_CALLS));
        lane.waiting.add(new Pending(message, done));
        lane.kick();
        // a copy: a caller's cancel or timeout on it neither frees the slot nor changes what the lane reports
        return done.copy();
    }

    /**
     * Answers one publish: its slot is released FIRST, so that a caller's callback (run on the lane's thread) that
     * publishes again finds a slot instead of waiting for one only this thread could free.
     */
    private void answer(Pending p, Throwable failure) {
        slots.release();
        if (failure == null) {
            p.done().complete(null);
        } else {
            p.done().completeExceptionally(failure);
        }
    }

    /** An upper bound of what a message adds to a {@code SendMessageBatch} request (body base64'd, attributes). */
    static long size(OutgoingMessage m) {
        long headers = 0;
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            headers += 2L * (h.getKey().length() + h.getValue().length());
        }
        return (m.body().length * 4L + 2) / 3 + 4L * m.id().length() + headers + 512;
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
                    } catch (RuntimeException | Error e) {
                        calling.decrementAndGet();
                        if (e instanceof Error error) {
                            throw error; // no thread for it now (out of memory): the next publish tries again
                        }
                        failWaiting("the transport is closed"); // the executor is shut down
                    }
                    return;
                }
            }
        }

        private void drain() {
            Pending carry = null; // taken but over the size of the batch it was taken for: first of the next
            try {
                while (true) {
                    if (closed) {
                        if (carry != null) {
                            answer(carry, new TransportException("the transport closed: " + carry.message().id()
                                    + " was not published"));
                            carry = null;
                        }
                        failWaiting("the transport closed");
                    }
                    List<Pending> batch = new ArrayList<>(batchMax);
                    long bytes = 0;
                    if (carry != null) {
                        batch.add(carry);
                        bytes = size(carry.message());
                        carry = null;
                    }
                    Pending next;
                    while (batch.size() < batchMax && (next = waiting.poll()) != null) {
                        long size = size(next.message());
                        if (!batch.isEmpty() && bytes + size > MAX_BATCH_BYTES) {
                            carry = next; // a message too big for any batch still goes, alone, and fails alone
                            break;
                        }
                        batch.add(next);
                        bytes += size;
                    }
                    if (batch.isEmpty()) {
                        calling.decrementAndGet();
                        // a publish added after the poll and before the decrement saw this loop still running
                        if (waiting.isEmpty() || !reclaim()) {
                            return;
                        }
                        continue;
                    }
                    send(batch);
                }
            } catch (RuntimeException | Error e) {
                // send() answers its batch before it rethrows; what this loop holds otherwise goes back to the lane,
                // and another loop takes over, so that the lane never stays "busy" with no loop running
                if (carry != null) {
                    answer(carry, new TransportException("not published: " + e, e));
                }
                calling.decrementAndGet();
                if (!waiting.isEmpty()) {
                    kick();
                }
                throw e;
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
                batch.forEach(p -> answer(p, failure));
                if (e instanceof VirtualMachineError vme) {
                    throw vme;
                }
                return;
            }
            for (int i = 0; i < batch.size(); i++) {
                Pending p = batch.get(i);
                String why = refused.get(i);
                answer(p, why == null ? null : new TransportException("SQS refused " + p.message().id() + " to "
                        + queue + ": " + why));
            }
        }

        private void failWaiting(String why) {
            for (Pending p = waiting.poll(); p != null; p = waiting.poll()) {
                answer(p, new TransportException(why + ": " + p.message().id() + " was not published"));
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
