package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AddressResolver;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.RecoveryListener;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link MessageTransport} on RabbitMQ (amqp-client): two connections with automatic connection and
 * topology recovery (one publishes, one consumes, so that flow control on publishers never stalls
 * acks), publisher confirms, persistent messages whose AMQP {@code message_id} is the idempotency
 * key, headers as strings, manual acks, a channel per consumer thread.
 *
 * <p>The topology of a queue ({@link RabbitTopology}: work queue, retry buckets, hold queue,
 * dead-letter exchange and queue) is declared idempotently on its first publish or subscribe.
 * {@code groupId} and {@code dedupId} of an outgoing message are ignored: RabbitMQ has neither.
 * Thread-safe.
 */
public final class RabbitMessageTransport implements MessageTransport {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitMessageTransport.class);
    private static final int PUBLISHING_CHANNELS = 4;

    private final RabbitSettings settings;
    private final Clock clock;
    private final ExecutorService consumerThreads;
    private final ScheduledExecutorService reopener;
    private final ScheduledExecutorService giveBacks;
    private final Connection publishing;
    private final Connection consuming;
    private final ConfirmingPublisher publisher;
    private final Declarations declarations;
    private final RabbitDeadLetterQueue deadLetters;
    private final List<RabbitSubscription> subscriptions = new CopyOnWriteArrayList<>();

    public RabbitMessageTransport(RabbitSettings settings) {
        this(settings, Clock.system(), "idemkit");
    }

    /**
     * @param connectionName shown by the broker ({@code rabbitmqctl list_connections client_properties})
     *     with {@code -publish} / {@code -consume} appended
     * @throws TransportException when the broker cannot be reached
     */
    public RabbitMessageTransport(RabbitSettings settings, Clock clock, String connectionName) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.consumerThreads = Executors.newCachedThreadPool(named(connectionName + "-consumer"));
        // apart: a reopen blocked on a dead socket (up to the RPC timeout) must not hold a give-back, which only nacks
        this.reopener = Executors.newSingleThreadScheduledExecutor(named(connectionName + "-reopen"));
        this.giveBacks = Executors.newSingleThreadScheduledExecutor(named(connectionName + "-give-back"));
        AddressResolver nodes = RabbitConnections.nodes(settings);
        try {
            // declarations run on short-lived channels and are idemkit's own (Declarations): the publishing connection
            // recovers its channels but records no topology, which it would try to redeclare on closed channels
            this.publishing = RabbitConnections.factory(settings, false).newConnection(null, nodes, connectionName + "-publish");
            // the consuming connection's topology is its consumers: recovered onto whichever node answers
            this.consuming = RabbitConnections.factory(settings, true).newConnection(consumerThreads, nodes, connectionName + "-consume");
        } catch (IOException | java.util.concurrent.TimeoutException e) {
            consumerThreads.shutdownNow();
            reopener.shutdownNow();
            giveBacks.shutdownNow();
            throw new TransportException("cannot connect to " + settings.redactedUri()
                    + (settings.addresses().isEmpty() ? "" : " at " + settings.addresses()) + ": " + e.getMessage(), e);
        }
        this.publisher = new ConfirmingPublisher(publishing, PUBLISHING_CHANNELS, settings.confirmTimeout());
        this.declarations = new Declarations(publishing, settings);
        // after a connection recovery nothing is assumed declared: a broker that lost its definitions (reset, a node
        // without its data) gets the topology again on the next use of each queue (declarations are idempotent)
        for (Connection c : List.of(publishing, consuming)) {
            if (c instanceof Recoverable r) {
                r.addRecoveryListener(new RecoveryListener() {
                    @Override
                    public void handleRecovery(Recoverable recovered) {
                        declarations.forgetAll();
                    }

                    @Override
                    public void handleRecoveryStarted(Recoverable recovering) {
                        // nothing until it is back
                    }
                });
            }
        }
        this.deadLetters = new RabbitDeadLetterQueue(publishing, declarations, settings.confirmTimeout(), clock);
        LOG.info("decision=connect settings={}", settings);
    }

    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        Objects.requireNonNull(handler, "handler");
        if (publisher.blockedBy().isEmpty()) { // else the subscription declares once the alarm ends, before consuming
            declarations.ensureQueue(queue);
        }
        RabbitSubscription subscription = new RabbitSubscription(queue, handler, settings, consuming, publisher,
                declarations, clock, reopener, giveBacks);
        subscription.start();
        subscriptions.add(subscription);
        return () -> {
            subscriptions.remove(subscription);
            subscription.close();
        };
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        declarations.ensureQueue(queue);
        publisher.publish(queue, AmqpMessages.propertiesOf(message, clock.now().toEpochMilli()), message.body());
    }

    /** Many in flight (up to {@link ConfirmingPublisher#MAX_IN_FLIGHT}); one group's publishes on one channel, in order. */
    @Override
    public java.util.concurrent.CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
        try {
            declarations.ensureQueue(queue);
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        return publisher.publishAsync(queue, message, clock);
    }

    /**
     * {@code UP}, or {@code DOWN: } and why: the broker blocks publishing (a resource alarm: no retry or dead letter can
     * be published, so the subscriptions hand no delivery to their handlers until it ends), or a connection is
     * recovering. Cheap: reads state the connections keep, asks the broker nothing.
     */
    @Override
    public String health() {
        java.util.Optional<String> blocked = publisher.blockedBy();
        if (blocked.isPresent()) {
            return "DOWN: the broker blocks publishing (" + blocked.get() + "); deliveries wait unsettled until it ends";
        }
        if (!publishing.isOpen()) {
            return "DOWN: the publishing connection is recovering";
        }
        return consuming.isOpen() ? "UP" : "DOWN: the consuming connection is recovering";
    }

    /** The dead-letter queues of this transport's work queues, sharing its publishing connection. */
    public RabbitDeadLetterQueue deadLetterQueue() {
        return deadLetters;
    }

    /** Declares the topology of {@code queue} now (it is otherwise declared on first use). */
    public void declare(String queue) {
        declarations.ensureQueue(queue);
    }

    /** Deletes {@code queue}, its retry buckets, hold queue, dead-letter exchange and dead-letter queue. */
    public void deleteTopology(String queue) {
        declarations.delete(queue);
    }

    @Override
    public void close() {
        for (RabbitSubscription s : subscriptions) {
            s.close();
        }
        subscriptions.clear();
        publisher.close();
        closeQuietly(consuming);
        closeQuietly(publishing);
        reopener.shutdownNow();
        giveBacks.shutdownNow();
        consumerThreads.shutdown();
        LOG.info("decision=disconnect uri={}", settings.redactedUri());
    }

    /** Drops both connections without settling anything, as a crashed process would (tests only). */
    void abort() {
        reopener.shutdownNow();
        giveBacks.shutdownNow();
        consuming.abort();
        publishing.abort();
        consumerThreads.shutdownNow();
    }

    private static void closeQuietly(Connection c) {
        try {
            if (c.isOpen()) {
                c.close(5_000);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("close of connection {} failed: {}", c.getClientProvidedName(), e.getMessage());
        }
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
