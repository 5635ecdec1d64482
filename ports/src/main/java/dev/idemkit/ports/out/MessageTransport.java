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
