package dev.idemkit.ports.memory;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A test transport whose every {@code publishAsync} is written at once and answered only when the test completes its
 * future; its blocking {@code publish} fails the test (a pipelined caller must not fall back to it). For the tests of
 * what publishes pipelined: the outbox relay, the tracing decorator, {@code idemkit publish}.
 */
public class PendingConfirmsTransport implements MessageTransport {
    /** A publish written and not yet answered. */
    public record Written(String queue, OutgoingMessage message, CompletableFuture<Void> confirm) {
        public String body() {
            return new String(message.body(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    private final LinkedBlockingQueue<Written> written = new LinkedBlockingQueue<>();
    private final java.util.List<Written> history = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile String health = "UP";

    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        throw new AssertionError("a pipelined publish must not become a blocking one");
    }

    @Override
    public CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Written w = new Written(queue, message, f);
        history.add(w);
        written.add(w);
        return f;
    }

    @Override
    public String health() {
        return health;
    }

    public void health(String h) {
        health = h;
    }

    @Override
    public void close() {}

    /** Every publish written so far, in order, answered or not ({@link #next} does not take them from here). */
    public java.util.List<Written> writtenSoFar() {
        return java.util.List.copyOf(history);
    }

    /** The next publish written within a second, or null. */
    public Written next() throws InterruptedException {
        return written.poll(1, TimeUnit.SECONDS);
    }

    /** The next publish written within {@code millis}, or null. */
    public Written poll(long millis) throws InterruptedException {
        return written.poll(millis, TimeUnit.MILLISECONDS);
    }

    /** Whether every publish written so far was taken ({@link #next}, {@link #poll}). */
    public boolean drained() {
        return written.isEmpty();
    }

    /** Whether nothing more is written within {@code millis} (fails the test when something is). */
    public boolean quietFor(long millis) throws InterruptedException {
        Written w = written.poll(millis, TimeUnit.MILLISECONDS);
        if (w != null) {
            throw new AssertionError("written while it should wait: " + w.body());
        }
        return true;
    }
}
