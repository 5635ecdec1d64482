package dev.idemkit.ports.out;

/**
 * A queue-based transport with at-least-once delivery: receive, ack, retry after a delay,
 * dead-letter, publish. Declares what it needs (queues, retry path, dead-letter queue) idempotently.
 * Thread-safe.
 */
public interface MessageTransport extends AutoCloseable {

    /**
     * Starts delivering messages of {@code queue} to {@code handler}, concurrently up to the transport's
     * configured bound. A message without a usable id is still delivered: the consumer runtime
     * dead-letters it with that reason.
     */
    Subscription subscribe(String queue, DeliveryHandler handler);

    /**
     * Publishes durably: returns only when the broker has confirmed the message.
     *
     * @throws TransportException when the broker did not confirm
     */
    void publish(String queue, OutgoingMessage message);

    /**
     * Publishes durably without waiting: the future completes when the broker has confirmed the message, or
     * exceptionally with a {@link TransportException} when it did not (refused, unroutable, or written and not confirmed
     * within the transport's timeout: outcome unknown, so publish it again with the same id). Many publishes may be in
     * flight at once; a call may wait, bounded by the transport's timeout, while too many are.
     *
     * <p>Order: publishes of one {@link OutgoingMessage#groupId() group} started one after another from one thread are
     * written in that order on one ordered path (RabbitMQ: one channel; Kafka: one partition), so a queue receives them
     * in that order unless one of them fails; then the ones after it may still land (docs/ARCHITECTURE.md section 9 says
     * what the outbox relay does about that). Publishes of different groups, or without one, have no order between them.
     *
     * <p>The future's dependents run on a thread of the transport: they must not block, and must not publish.
     *
     * <p>The default publishes on the calling thread and returns a completed future (one confirm at a time).
     */
    default java.util.concurrent.CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
        try {
            publish(queue, message);
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Whether the transport can take and settle deliveries now: {@code "UP"}, or {@code "DOWN: "} followed by why (for
     * instance, RabbitMQ blocks publishing during a resource alarm, so no retry or dead letter could be published).
     * Cheap and non-blocking: it reads what the transport already knows and asks the broker nothing. Thread-safe.
     */
    default String health() {
        return "UP";
    }

    /** Closes connections; subscriptions are closed first. */
    @Override
    void close();
}
