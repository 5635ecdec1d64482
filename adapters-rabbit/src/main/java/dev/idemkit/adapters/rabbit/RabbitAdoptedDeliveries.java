package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * idemkit's settle paths for messages that another AMQP consumer received: a Spring {@code @RabbitListener}'s
 * container consumes a queue, and each delivery it hands over becomes, through {@link #adopt}, a {@link Delivery}
 * that idemkit's delivery flow settles the way this adapter settles its own. Retries wait in the queue's retry buckets
 * (no consumer thread is held), dead letters reach {@code Q.dlq} through the hold queue with idemkit's headers and the
 * broker's {@code x-death}, so {@code idemkit dlq} and the console list, show and redrive them.
 *
 * <p>The work queue is the consumer's own (declared by the service, with the arguments it chose); {@link #declare}
 * declares only its settle paths. One publishing connection with automatic recovery and publisher confirms.
 * Thread-safe.
 */
public final class RabbitAdoptedDeliveries implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitAdoptedDeliveries.class);
    private static final int PUBLISHING_CHANNELS = 4;

    private final RabbitSettings settings;
    private final Clock clock;
    private final Connection publishing;
    private final ConfirmingPublisher publisher;
    private final Declarations declarations;
    private final RabbitDeadLetterQueue deadLetters;

    /**
     * @param connectionName shown by the broker, with {@code -settle} appended
     * @throws TransportException when the broker cannot be reached
     */
    public RabbitAdoptedDeliveries(RabbitSettings settings, Clock clock, String connectionName) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.publishing = RabbitConnections.publishing(settings, connectionName + "-settle");
        this.publisher = new ConfirmingPublisher(publishing, PUBLISHING_CHANNELS, settings.confirmTimeout());
        this.declarations = new Declarations(publishing, settings);
        if (publishing instanceof com.rabbitmq.client.Recoverable r) {
            r.addRecoveryListener(new com.rabbitmq.client.RecoveryListener() {
                @Override
                public void handleRecovery(com.rabbitmq.client.Recoverable recovered) {
                    declarations.forgetAll();
                }

                @Override
                public void handleRecoveryStarted(com.rabbitmq.client.Recoverable recovering) {
                    // nothing until it is back
                }
            });
        }
        this.deadLetters = new RabbitDeadLetterQueue(publishing, declarations, settings.confirmTimeout(), clock);
    }

    /**
     * Declares the settle paths of {@code queue}: its retry buckets, hold queue, dead-letter exchange and dead-letter
     * queue, with this adapter's queue type; {@code queue} itself is left as it is.
     *
     * @throws dev.idemkit.ports.out.TopologyMismatchException when one of them exists with other arguments
     */
    public void declare(String queue) {
        declarations.ensureSettlePaths(queue);
    }

    /**
     * The delivery flow's view of a message the consumer of {@code queue} received.
     *
     * @param acknowledge what acknowledges the original: run once the delivery is settled (acked, or its retry or dead
     *     letter confirmed by the broker); when a copy cannot be confirmed the settle method throws instead and the
     *     original must go back to the broker unacknowledged
     */
    public Delivery adopt(String queue, AMQP.BasicProperties props, byte[] body, boolean redelivered,
            Runnable acknowledge) {
        return adopt(queue, props, body, redelivered, acknowledge, () -> true);
    }

    /**
     * The same, for a consumer that can tell whether it still holds the original (its channel is open): a settle's
     * copy waits through a resource alarm, or for its confirm, only while {@code stillHeld} says so. Once the channel
     * closed the broker has requeued the original; a copy published after that would be a second delivery of it (a
     * retry copy beside the redelivery, a dead letter of a message that is also processed), so the settle stops
     * waiting and throws, having published nothing it had not already written.
     *
     * @param stillHeld whether the consumer still holds the original; asked every 200 ms while the settle waits
     */
    public Delivery adopt(String queue, AMQP.BasicProperties props, byte[] body, boolean redelivered,
            Runnable acknowledge, java.util.function.BooleanSupplier stillHeld) {
        Objects.requireNonNull(props, "props");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(acknowledge, "acknowledge");
        Objects.requireNonNull(stillHeld, "stillHeld");
        RabbitTopology.requireUsableName(queue);
        return new AdoptedDelivery(new Received(queue, props, body), redelivered, publisher, declarations, clock,
                acknowledge, stillHeld);
    }

    /**
     * Waits while the broker blocks publishing (a resource alarm), for as long as {@code giveUp} says no (asked every
     * 200 ms): the consumer's door. A delivery that runs while no retry or dead letter can be published may need one
     * and then holds its thread until the alarm ends; held here, before the effect, it waits unsettled (the consumer's
     * prefetch fills and the broker sends no more) and the flow starts once publishing is open. Returns at once when
     * publishing is open. The gate learns of an alarm from the broker's {@code connection.blocked}, which comes once
     * this adapter's connection publishes during the alarm (a settle's copy) or at its opening and recoveries (a probe).
     *
     * @return true once publishing is open; false when {@code giveUp} said so first or the thread was interrupted (its
     *     flag set again)
     */
    public boolean awaitPublishing(java.util.function.BooleanSupplier giveUp) {
        Objects.requireNonNull(giveUp, "giveUp");
        return publisher.awaitOpen(giveUp);
    }

    /**
     * Gives the headers of a received message (a Spring {@code MessageProperties}' map, changed in place) back the
     * shape the producer sent: on a copy idemkit published (a retry, a redrive), the producer's headers travel in one
     * table of their own, where no broker feature reads them; they are put back beside idemkit's headers (never over
     * one of the same name) and the table is removed. A first delivery is left as it is. Call it before a listener
     * sees the message, so that its {@code @Header} parameters read on a retry what they read on the first attempt.
     */
    public static void restoreApplicationHeaders(java.util.Map<String, Object> headers) {
        if (headers == null || !headers.containsKey(AmqpMessages.APPLICATION_HEADERS)) {
            return;
        }
        java.util.Map<String, Object> application = AmqpMessages.applicationHeaders(headers);
        headers.remove(AmqpMessages.APPLICATION_HEADERS);
        application.forEach(headers::putIfAbsent);
    }

    /**
     * The arguments to declare a consumer's own work queue {@code queue} with, so that what the broker dead-letters from
     * it (a quorum queue's delivery limit, a reject without requeue) reaches idemkit's dead-letter queue, with
     * {@code x-death}, instead of being dropped: {@code x-dead-letter-exchange=Q.dlx},
     * {@code x-dead-letter-routing-key=Q.dlq}.
     */
    public static java.util.Map<String, Object> workQueueArguments(String queue) {
        RabbitTopology.requireUsableName(queue);
        return java.util.Map.of("x-dead-letter-exchange", RabbitTopology.deadLetterExchange(queue),
                "x-dead-letter-routing-key", RabbitTopology.deadLetterQueue(queue));
    }

    /**
     * {@code UP}, or {@code DOWN: } and why, in the words of {@link RabbitMessageTransport#health}: the broker blocks
     * publishing (a resource alarm: a settle that must publish holds its listener thread, its delivery unsettled, until
     * the alarm ends), or the settle connection is recovering. Asks the broker nothing.
     */
    public String health() {
        java.util.Optional<String> blocked = publisher.blockedBy();
        if (blocked.isPresent()) {
            return "DOWN: the broker blocks publishing (" + blocked.get() + "); deliveries wait unsettled until it ends";
        }
        return publishing.isOpen() ? "UP" : "DOWN: the settle connection is recovering";
    }

    /** The dead-letter queues of the adopted queues (depth, inspection, approved redrive). */
    public RabbitDeadLetterQueue deadLetterQueue() {
        return deadLetters;
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
        LOG.info("decision=disconnect uri={}", settings.redactedUri());
    }
}
