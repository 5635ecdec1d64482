package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The publishing half of {@link RabbitMessageTransport}, for a producer whose consumers own their queues (a Spring
 * service's outbox relay): persistent messages with their AMQP {@code message_id}, publisher confirms, many in flight,
 * one group's in call order on one channel, exactly as the transport publishes. It declares nothing: a queue is used as
 * its consumer declared it, with whatever type and arguments it has. A publish to a queue that does not exist is
 * returned by the broker ({@code mandatory}) and fails, naming the queue; the relay retries it and parks the row after
 * its attempts, so a missing queue loses nothing. It subscribes to nothing. One connection with automatic recovery.
 * Thread-safe.
 */
public final class RabbitProducer implements MessageTransport {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitProducer.class);
    private static final int PUBLISHING_CHANNELS = 4;

    private final RabbitSettings settings;
    private final Clock clock;
    private final Connection publishing;
    private final ConfirmingPublisher publisher;

    /**
     * @param connectionName shown by the broker, with {@code -publish} appended
     * @throws dev.idemkit.ports.out.TransportException when the broker cannot be reached
     */
    public RabbitProducer(RabbitSettings settings, Clock clock, String connectionName) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.publishing = RabbitConnections.publishing(settings, connectionName + "-publish");
        this.publisher = new ConfirmingPublisher(publishing, PUBLISHING_CHANNELS, settings.confirmTimeout());
        LOG.info("decision=connect role=producer settings={}", settings);
    }

    /** A producer has no consumers: subscribe through a {@link RabbitMessageTransport}. */
    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        throw new UnsupportedOperationException("a RabbitProducer only publishes: subscribe to " + queue
                + " through a RabbitMessageTransport");
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        RabbitTopology.requireUsableName(queue);
        publisher.publish(queue, AmqpMessages.propertiesOf(message, clock.now().toEpochMilli()), message.body());
    }

    @Override
    public CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
        try {
            RabbitTopology.requireUsableName(queue);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return publisher.publishAsync(queue, message, clock);
    }

    /** {@code UP}, or {@code DOWN: } and why (a resource alarm blocks publishing; the connection is recovering). */
    @Override
    public String health() {
        java.util.Optional<String> blocked = publisher.blockedBy();
        if (blocked.isPresent()) {
            return "DOWN: the broker blocks publishing (" + blocked.get() + ")";
        }
        return publishing.isOpen() ? "UP" : "DOWN: the publishing connection is recovering";
    }

    @Override
    public void close() {
        publisher.close();
        try {
            if (publishing.isOpen()) {
                publishing.close(5_000);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("close of connection {} failed: {}", publishing.getClientProvidedName(), e.getMessage());
        }
        LOG.info("decision=disconnect role=producer uri={}", settings.redactedUri());
    }
}
