package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.TopologyMismatchException;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes to the default exchange with publisher confirms and {@code mandatory}: a call returns only
 * when the broker confirmed the message into its queue, and fails with {@link TransportException} on a
 * nack, a return (no such queue), a closed channel or the timeout.
 *
 * <p>A small pool of confirm-mode channels, each used by one thread at a time for the write only; the
 * wait for the confirm happens outside the pool, so concurrent callers pipeline instead of queueing. {@link #publishAsync}
 * does not wait at all: up to {@link #MAX_IN_FLIGHT} publishes are in flight, each told of its own confirm.
 * Returns are matched to their publish through a header carrying the channel's sequence number.
 *
 * <p>A resource alarm ({@link PublishGate}): nothing is written while the broker blocks publishing (a producer's publish
 * fails at once, a settle's copy waits). A producer's publish already written when the alarm began fails after its
 * confirm timeout, "written, outcome unknown": the producer repeats it with the same id and the inbox downstream absorbs
 * a second copy, but no producer call is unbounded (the outbox relay holds its rows meanwhile). A settle's copy already
 * written keeps waiting while the broker blocks and its delivery is still held (its timeout counts only the time the
 * broker let the connection publish, so it is not written a second time), and stops waiting once the delivery is no
 * longer held.
 */
final class ConfirmingPublisher implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ConfirmingPublisher.class);
    /** Internal: matches a basic.return to its publish; never shown to handlers. */
    static final String PUBLISH_TAG = "x-idemkit-publish-tag";

    /**
     * Publishes written and not yet confirmed, at most, over all channels ({@link #publishAsync}): a caller past it
     * waits for a confirm, up to the timeout. Above RabbitMQ PerfTest's usual confirm window of a few hundred, so the
     * broker, not this bound, sets the pace.
     */
    static final int MAX_IN_FLIGHT = 1024;

    private final Connection connection;
    private final Duration timeout;
    private final ConfirmChannel[] slots;
    private final java.util.concurrent.atomic.AtomicInteger nextSlot = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(MAX_IN_FLIGHT);
    private final PublishGate gate;

    ConfirmingPublisher(Connection connection, int channels, Duration timeout) {
        this.connection = connection;
        this.timeout = timeout;
        this.gate = PublishGate.of(connection, timeout);
        this.slots = new ConfirmChannel[channels];
        for (int i = 0; i < channels; i++) {
            slots[i] = new ConfirmChannel(null);
        }
    }

    /**
     * Publishes a settle's copy, trying again with backoff (50 ms doubling to 1 s) for up to {@code patience} while
     * {@code stillHeld} says the original delivery is still held: the publishing connection may be recovering (its node
     * died, the broker closed it) while the consuming one is fine. Giving up at once would requeue the delivery, which
     * is redelivered at once and fails again: a spin that, on a quorum queue, burns the message's delivery limit in
     * about a second ({@code PublishingConnectionLossIT}). A {@link TopologyMismatchException} is not retried: waiting
     * cannot fix it. While the broker blocks publishing (a resource alarm) nothing is tried and the patience does not
     * run: the delivery stays held, unsettled, until the alarm ends or {@code stillHeld} turns false.
     *
     * @param what names the delivery in the log lines (queue and printable id)
     */
    void publishPatiently(String target, AMQP.BasicProperties copy, byte[] body, Duration patience,
            java.util.function.BooleanSupplier stillHeld, String what) {
        publishPatiently(() -> { }, target, copy, body, patience, stillHeld, what);
    }

    /**
     * The same, running {@code prepare} (the target's declaration, which needs the same connection) before each try.
     */
    void publishPatiently(Runnable prepare, String target, AMQP.BasicProperties copy, byte[] body, Duration patience,
            java.util.function.BooleanSupplier stillHeld, String what) {
        long deadline = System.nanoTime() + patience.toNanos();
        long blockedAtStart = gate.blockedNanos();
        long pause = 50;
        for (int tries = 1; ; tries++) {
            awaitPublishing(stillHeld, what);
            try {
                prepare.run();
                publish(target, copy, body, stillHeld);
                if (tries > 1) {
                    LOG.info("decision=settle-published delivery=\"{}\" target={} tries={}", what, target, tries);
                }
                return;
            } catch (TopologyMismatchException e) {
                throw e;
            } catch (TransportException e) {
                long alarm = gate.blockedNanos() - blockedAtStart; // the patience runs only while publishing is open
                if (!stillHeld.getAsBoolean() || System.nanoTime() + pause * 1_000_000 > deadline + alarm) {
                    throw e;
                }
                if (tries == 1) {
                    LOG.warn("decision=settle-publish-waiting delivery=\"{}\" target={} cause=\"{}\" patience={}", what,
                            target, e.getMessage(), patience);
                }
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                pause = Math.min(1_000, pause * 2);
            }
        }
    }

    /** While the broker blocks publishing, waits (unsettled) until it stops or {@code stillHeld} turns false. */
    private void awaitPublishing(java.util.function.BooleanSupplier stillHeld, String what) {
        if (gate.blockedBy().isEmpty()) {
            return;
        }
        LOG.warn("decision=settle-held-by-alarm delivery=\"{}\" reason=\"{}\"", what, gate.blockedBy().orElse(""));
        if (!gate.awaitOpen(() -> !stillHeld.getAsBoolean())) {
            throw new TransportException("the broker blocked publishing (" + gate.blockedBy().orElse("") + ") until the"
                    + " delivery was no longer held: nothing was published");
        }
    }

    /**
     * Waits while the broker blocks publishing (a resource alarm), for as long as {@code giveUp} says no.
     *
     * @return whether publishing is open
     */
    boolean awaitOpen(java.util.function.BooleanSupplier giveUp) {
        return gate.awaitOpen(giveUp);
    }

    /** Runs {@code listener} after each change of the publishing gate (blocked, open); it must not block. */
    void onGateChange(Runnable listener) {
        gate.onChange(listener);
    }

    void removeGateListener(Runnable listener) {
        gate.removeListener(listener);
    }

    /** Why the broker blocks this publisher's connection (its alarm's reason); empty while it does not. */
    java.util.Optional<String> blockedBy() {
        return gate.blockedBy();
    }

    /**
     * A producer's publish of {@code body} to queue {@code routingKey}; returns when the broker confirmed it. Fails at
     * once, writing nothing, while the broker blocks publishing, and after the confirm timeout counted from the write
     * even if the broker blocked publishing meanwhile (written, outcome unknown: the caller repeats it with the same id).
     */
    void publish(String routingKey, AMQP.BasicProperties props, byte[] body) {
        publish(routingKey, props, body, null);
    }

    /**
     * @param stillHeld null for a producer's publish; for a settle's copy, whether its delivery is still held: while it
     *     is and the broker blocks publishing, the confirm is waited for without a bound
     */
    private void publish(String routingKey, AMQP.BasicProperties props, byte[] body,
            java.util.function.BooleanSupplier stillHeld) {
        java.util.Optional<String> blocked = gate.blockedBy();
        if (blocked.isPresent()) {
            throw new TransportException("publish to " + routingKey + " not sent: the broker blocks publishing ("
                    + blocked.get() + ")");
        }
        Pending pending;
        ConfirmChannel slot = borrow(null);
        try {
            pending = slot.send(routingKey, props, body);
        } catch (IOException | RuntimeException e) {
            throw new TransportException("publish to " + routingKey + " failed: " + e.getMessage(), e);
        } finally {
            slot.lock.unlock();
        }
        try {
            awaitConfirm(pending.future, stillHeld);
        } catch (TimeoutException e) {
            pending.owner.remove(pending.seq);
            throw new TransportException("publish to " + routingKey + " written, not confirmed within "
                    + timeout.toMillis() + " ms: outcome unknown" + gate.blockedBy().map(r -> " (the broker blocks"
                    + " publishing: " + r + "; it may still take it)").orElse(""));
        } catch (NoLongerHeld e) {
            pending.owner.remove(pending.seq);
            LOG.warn("decision=settle-copy-wait-stopped target={} detail=\"the delivery is no longer held (its channel"
                    + " closed, the broker requeues it): the copy already written may still land, a duplicate the"
                    + " inbox absorbs\"", routingKey);
            throw new TransportException("publish to " + routingKey + " written, not confirmed, and its delivery is no"
                    + " longer held: the copy may still land");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof TransportException t ? t
                    : new TransportException("publish to " + routingKey + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while waiting for the confirm of a publish to " + routingKey, e);
        }
    }

    /**
     * The confirm. A producer's ({@code stillHeld} null): up to the timeout counted from the write, alarm or not. A
     * settle's: up to the timeout counted from the write or the last unblocking, whichever is later, and for as long as
     * the broker blocks publishing, while {@code stillHeld} says so (checked every 200 ms): a copy written before an
     * alarm is taken after it.
     *
     * @throws NoLongerHeld once {@code stillHeld} turned false before the confirm came
     */
    private void awaitConfirm(CompletableFuture<Void> confirm, java.util.function.BooleanSupplier stillHeld)
            throws TimeoutException, ExecutionException, InterruptedException, NoLongerHeld {
        long written = System.nanoTime();
        long check = TimeUnit.MILLISECONDS.toNanos(200);
        while (true) {
            long left;
            if (stillHeld == null) {
                left = written + timeout.toNanos() - System.nanoTime();
            } else {
                if (!stillHeld.getAsBoolean() && !confirm.isDone()) {
                    throw new NoLongerHeld();
                }
                left = gate.blockedBy().isPresent() ? check
                        : Math.max(written, gate.openSince()) + timeout.toNanos() - System.nanoTime();
            }
            if (left <= 0) {
                throw new TimeoutException();
            }
            try {
                confirm.get(stillHeld == null ? left : Math.min(left, check), TimeUnit.NANOSECONDS);
                return;
            } catch (TimeoutException stillWaiting) {
                // blocked meanwhile, unblocked since, or the delivery given up: the loop decides
            }
        }
    }

    /** A settle's copy was written, its confirm has not come, and its delivery is no longer held. */
    private static final class NoLongerHeld extends Exception {
        NoLongerHeld() {
            super(null, null, false, false);
        }
    }

    /**
     * A producer's publish that does not wait for its confirm ({@code MessageTransport.publishAsync}): the future
     * completes on the confirm, or with a {@link TransportException} on a nack, a return, a closed channel or the timeout
     * counted from the write ("outcome unknown"). Fails at once, writing nothing, while the broker blocks publishing.
     * Publishes of one {@code group} go on one channel, in call order. The future completes on the connection's thread:
     * its dependents must not block.
     */
    /** {@link #publishAsync(String, AMQP.BasicProperties, byte[], String)} of a transport's message, its group its own. */
    CompletableFuture<Void> publishAsync(String queue, dev.idemkit.ports.out.OutgoingMessage message,
            dev.idemkit.ports.out.Clock clock) {
        return publishAsync(queue, AmqpMessages.propertiesOf(message, clock.now().toEpochMilli()), message.body(),
                message.groupId().orElse(null));
    }

    CompletableFuture<Void> publishAsync(String routingKey, AMQP.BasicProperties props, byte[] body, String group) {
        java.util.Optional<String> blocked = gate.blockedBy();
        if (blocked.isPresent()) {
            return CompletableFuture.failedFuture(new TransportException("publish to " + routingKey + " not sent: the"
                    + " broker blocks publishing (" + blocked.get() + ")"));
        }
        try {
            if (!inFlight.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                return CompletableFuture.failedFuture(new TransportException("publish to " + routingKey + " not sent: "
                        + MAX_IN_FLIGHT + " publishes waited for their confirms for " + timeout.toMillis() + " ms"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CompletableFuture.failedFuture(new TransportException("interrupted before a publish to " + routingKey, e));
        }
        Pending pending;
        try {
            ConfirmChannel slot = borrow(group);
            try {
                pending = slot.send(routingKey, props, body);
            } finally {
                slot.lock.unlock();
            }
        } catch (IOException | RuntimeException e) {
            inFlight.release();
            return CompletableFuture.failedFuture(e instanceof TransportException t ? t
                    : new TransportException("publish to " + routingKey + " failed: " + e.getMessage(), e));
        }
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        pending.future.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((ok, failure) -> {
            inFlight.release();
            if (failure == null) {
                confirmed.complete(null);
            } else if (failure instanceof TimeoutException) {
                pending.owner.remove(pending.seq);
                confirmed.completeExceptionally(new TransportException("publish to " + routingKey + " written, not"
                        + " confirmed within " + timeout.toMillis() + " ms: outcome unknown"));
            } else {
                confirmed.completeExceptionally(failure instanceof TransportException ? failure
                        : new TransportException("publish to " + routingKey + " failed: " + failure, failure));
            }
        });
        return confirmed;
    }

    /**
     * A channel to write on, locked for the caller (who unlocks it after the write) and open: the group's own one, or
     * for no group the first free one (else the next in turn).
     */
    private ConfirmChannel borrow(String group) {
        ConfirmChannel slot = null;
        if (group != null) {
            slot = slots[Math.floorMod(group.hashCode(), slots.length)];
        } else {
            int start = nextSlot.getAndIncrement();
            for (int i = 0; i < slots.length && slot == null; i++) {
                ConfirmChannel s = slots[Math.floorMod(start + i, slots.length)];
                if (s.lock.tryLock()) {
                    slot = s;
                }
            }
        }
        if (slot == null || group != null) {
            if (slot == null) {
                slot = slots[Math.floorMod(nextSlot.get(), slots.length)];
            }
            try {
                slot.lock.lockInterruptibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TransportException("interrupted while waiting for a publishing channel", e);
            }
        }
        try {
            slot.ensureOpen();
            return slot;
        } catch (IOException | RuntimeException e) {
            slot.lock.unlock();
            throw new TransportException("cannot open a publishing channel: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        for (ConfirmChannel slot : slots) {
            slot.close();
        }
    }

    private record Pending(ConfirmChannel owner, long seq, CompletableFuture<Void> future) {}

    /** One confirm-mode channel and the publishes it still waits confirms for. */
    private final class ConfirmChannel {
        /** Held for a write (and the channel's opening): one writer at a time, so a group's writes keep their order. */
        final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        private final ConcurrentNavigableMap<Long, CompletableFuture<Void>> waiting = new ConcurrentSkipListMap<>();
        private Channel channel;

        ConfirmChannel(Channel channel) {
            this.channel = channel;
        }

        /** Opens a channel when there is none or the broker closed it (a channel error is not auto-recovered). */
        void ensureOpen() throws IOException {
            if (channel != null && channel.isOpen()) {
                return;
            }
            failAll("channel closed before the broker confirmed");
            Channel ch = connection.createChannel();
            ch.confirmSelect();
            ch.addConfirmListener((seq, multiple) -> settle(seq, multiple, null),
                    (seq, multiple) -> settle(seq, multiple, "the broker nacked the publish"));
            ch.addReturnListener(r -> {
                Object tag = r.getProperties().getHeaders() == null ? null : r.getProperties().getHeaders().get(PUBLISH_TAG);
                CompletableFuture<Void> f = tag == null ? null : waiting.get(Long.parseLong(tag.toString()));
                if (f != null) {
                    f.completeExceptionally(new TransportException("unroutable: no queue " + r.getRoutingKey()
                            + " (" + r.getReplyText() + ")"));
                }
            });
            ch.addShutdownListener(cause -> failAll("channel closed before the broker confirmed: " + cause.getMessage()));
            channel = ch;
        }

        Pending send(String routingKey, AMQP.BasicProperties props, byte[] body) throws IOException {
            long seq = channel.getNextPublishSeqNo();
            Map<String, Object> headers = props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
            headers.put(PUBLISH_TAG, Long.toString(seq));
            CompletableFuture<Void> future = new CompletableFuture<>();
            waiting.put(seq, future);
            try {
                channel.basicPublish("", routingKey, true, props.builder().headers(headers).build(), body);
            } catch (IOException | RuntimeException e) {
                waiting.remove(seq);
                throw e;
            }
            return new Pending(this, seq, future);
        }

        void remove(long seq) {
            waiting.remove(seq);
        }

        private void settle(long seq, boolean multiple, String failure) {
            Map<Long, CompletableFuture<Void>> done = multiple ? waiting.headMap(seq, true) : sub(seq);
            for (CompletableFuture<Void> f : done.values()) {
                if (failure == null) {
                    f.complete(null);
                } else {
                    f.completeExceptionally(new TransportException(failure));
                }
            }
            done.clear();
        }

        private Map<Long, CompletableFuture<Void>> sub(long seq) {
            return waiting.subMap(seq, true, seq, true);
        }

        private void failAll(String why) {
            settleAll(new TransportException(why));
        }

        private void settleAll(TransportException failure) {
            for (Long seq : waiting.keySet()) {
                CompletableFuture<Void> f = waiting.remove(seq);
                if (f != null) {
                    f.completeExceptionally(failure);
                }
            }
        }

        void close() {
            try {
                if (channel != null && channel.isOpen()) {
                    channel.close();
                }
            } catch (IOException | TimeoutException | RuntimeException ignored) {
                // closing anyway; the connection close that follows releases everything
            }
        }
    }
}
