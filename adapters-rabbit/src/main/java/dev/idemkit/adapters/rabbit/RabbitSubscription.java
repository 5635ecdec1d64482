package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running consumer of one queue: {@code consumers} channels, each with its own basic.qos prefetch,
 * manual acks, and deliveries handled one at a time on that channel's dispatch thread.
 *
 * <p>After a connection loss the client's automatic recovery reopens the channels and re-registers the
 * consumers; a channel the broker closed with a channel-level error (not auto-recovered) is reopened
 * here after a second; a consumer the broker cancels (its queue deleted) is subscribed again, topology
 * declared anew, with backoff. Closing cancels the consumers, leaves deliveries that arrive afterwards
 * unhandled, waits up to the grace period for in-flight ones to settle, then closes the channels: the
 * broker requeues whatever is unsettled.
 *
 * <p>While the broker blocks the publishing connection (a resource alarm, {@link PublishGate}) no delivery reaches the
 * handler: each dispatch thread waits before handing its next delivery over, and what the channel holds stays
 * unsettled until the alarm ends, the channel closes or the subscription does. A channel that closes meanwhile (a
 * shutdown, a recovery, the broker's consumer timeout) gives its deliveries back, and a quorum queue counts each
 * against the delivery limit. So the consumers are cancelled when the gate closes ({@code basic.cancel}: the prefetch
 * is not refilled, and a channel closing during the alarm returns at most what it held when the alarm began), no
 * channel opened or reopened during the alarm consumes, and each consumes again when the gate opens.
 *
 * <p>Reopens and resubscribes run on {@code reopener}; each call they make to the broker is bounded by the connection's
 * RPC timeout ({@link RabbitConnections}), so one stuck on a silently dead socket does not hold the others until
 * heartbeat detection. Delayed give-backs run on a scheduler of their own ({@code giveBacks}) that makes no such call.
 */
final class RabbitSubscription implements Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitSubscription.class);

    private final String queue;
    private final DeliveryHandler handler;
    private final RabbitSettings settings;
    private final Connection connection;
    private final ConfirmingPublisher publisher;
    private final Declarations declarations;
    private final Clock clock;
    private final ScheduledExecutorService reopener;
    private final ScheduledExecutorService giveBacks;
    private final List<ChannelConsumer> consumers = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Runnable gateListener = this::followGateLater;
    private volatile boolean closing;

    RabbitSubscription(String queue, DeliveryHandler handler, RabbitSettings settings, Connection connection,
            ConfirmingPublisher publisher, Declarations declarations, Clock clock, ScheduledExecutorService reopener,
            ScheduledExecutorService giveBacks) {
        this.queue = queue;
        this.handler = handler;
        this.settings = settings;
        this.connection = connection;
        this.publisher = publisher;
        this.declarations = declarations;
        this.clock = clock;
        this.reopener = reopener;
        this.giveBacks = giveBacks;
    }

    void start() {
        publisher.onGateChange(gateListener);
        try {
            for (int i = 0; i < settings.consumers(); i++) {
                open();
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw new TransportException("cannot consume from " + queue + ": " + e.getMessage(), e);
        }
        LOG.info("decision=subscribe queue={} consumers={} prefetch={}{}", queue, settings.consumers(),
                settings.prefetch(), publisher.blockedBy().map(r -> " paused_by_alarm=\"" + r + "\"").orElse(""));
    }

    /** Called on the thread that saw the gate change (the publishing connection's): the work runs on the reopener. */
    private void followGateLater() {
        try {
            reopener.execute(this::followGate);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            LOG.debug("transport closing: {} does not follow the publishing gate", queue);
        }
    }

    /**
     * Cancels the consumers while the broker blocks publishing, so that no channel takes more than it holds now, and
     * consumes again once it stops. Reads the gate's state, so a late or repeated call is harmless.
     */
    private synchronized void followGate() {
        if (closing) {
            return;
        }
        java.util.Optional<String> blocked = publisher.blockedBy();
        if (blocked.isEmpty() && consumers.stream().anyMatch(c -> c.tag == null && c.channel.isOpen())) {
            try {
                declarations.ensureQueue(queue); // left until now: a blocked publishing connection answers no call
            } catch (RuntimeException e) {
                LOG.warn("decision=resume-consumers-failed queue={} cause=\"{}\" retry_in=1000ms", queue, e.getMessage());
                reopener.schedule(this::followGate, 1_000, TimeUnit.MILLISECONDS);
                return;
            }
        }
        int changed = 0;
        for (ChannelConsumer c : consumers) {
            if (!c.channel.isOpen()) {
                continue; // its shutdown listener reopens it
            }
            try {
                if (blocked.isPresent() && c.tag != null) {
                    c.channel.basicCancel(c.tag);
                    c.tag = null;
                    changed++;
                } else if (blocked.isEmpty() && c.tag == null) {
                    c.tag = c.channel.basicConsume(queue, false, c);
                    changed++;
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("decision=follow-publishing-gate-failed queue={} blocked={} cause=\"{}\"", queue,
                        blocked.isPresent(), e.getMessage());
            }
        }
        if (changed > 0) {
            LOG.info("decision={} queue={} consumers={}", blocked.isPresent() ? "consumers-paused-by-alarm"
                    : "consumers-resumed", queue, changed);
        }
    }

    /**
     * One consumer channel. The shutdown listener that reopens it is added only once the consumer is registered: a
     * channel whose {@code basic.consume} the broker refused (404: the queue's node is down, or the queue is gone) is
     * closed here and the caller retries, so that one failure schedules one retry, never two.
     */
    private void open() throws IOException {
        Channel ch = connection.createChannel();
        try {
            ch.basicQos(settings.prefetch());
            ChannelConsumer consumer = new ChannelConsumer(ch);
            synchronized (this) { // with followGate: a gate change after this check finds the consumer in the list
                if (publisher.blockedBy().isEmpty()) {
                    consumer.tag = ch.basicConsume(queue, false, consumer);
                } // else it consumes once the gate opens
                consumers.add(consumer);
            }
            if (closing) { // close() ran meanwhile and will not see this one
                consumers.remove(consumer);
                closeQuietly(ch);
                return;
            }
            ch.addShutdownListener(cause -> {
                if (!closing && !cause.isHardError() && !cause.isInitiatedByApplication()) {
                    LOG.warn("decision=reopen-channel queue={} cause=\"{}\"", queue, cause.getMessage());
                    consumers.remove(consumer);
                    scheduleReopen(1_000);
                }
            });
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    private void scheduleReopen(long delayMillis) {
        try {
            reopener.schedule(() -> reopen(delayMillis), delayMillis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            LOG.debug("transport closing: {} is not reopened", queue);
        }
    }

    /** Reopens a consumer channel the broker closed; on failure again after twice the delay, up to 30 s. */
    private void reopen(long delayMillis) {
        if (closing) {
            return;
        }
        try {
            ensureQueueUnlessBlocked(); // declared again if the broker lost it (after a recovery nothing is cached)
            open();
            LOG.info("decision=reopened-channel queue={} consumers={}", queue, consumers.size());
        } catch (IOException | RuntimeException e) {
            long next = Math.min(30_000, delayMillis * 2);
            LOG.warn("decision=reopen-channel-failed queue={} cause=\"{}\" retry_in={}ms", queue, e.getMessage(), next);
            scheduleReopen(next);
        }
    }

    /**
     * After the broker cancelled a consumer (its queue deleted, or lost with the node that held it): declare the
     * topology again and consume on a fresh channel, retrying with backoff (1 s doubling to 30 s) until it works
     * or the subscription closes. The cancelled consumer's channel is closed: its deliveries were all handled
     * before the cancel reached it (one dispatch thread per channel), and what it still holds is requeued.
     */
    private void resubscribe(ChannelConsumer cancelled, long delayMillis) {
        if (closing) {
            return;
        }
        try {
            declarations.forget(queue);
            ensureQueueUnlessBlocked();
            open();
            closeQuietly(cancelled.channel);
            LOG.info("decision=resubscribed queue={} consumers={}", queue, consumers.size());
        } catch (IOException | RuntimeException e) {
            long next = Math.min(30_000, Math.max(1_000, delayMillis * 2));
            LOG.error("decision=resubscribe-failed queue={} consumers={}/{} cause=\"{}\" retry_in={}ms", queue,
                    consumers.size(), settings.consumers(), e.getMessage(), next);
            reopener.schedule(() -> resubscribe(cancelled, next), next, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Declares the queue's topology, unless the broker blocks publishing: declarations run on the publishing connection,
     * which the broker does not read meanwhile, and a channel opened then consumes only after the alarm, declaring first
     * ({@link #followGate}).
     */
    private void ensureQueueUnlessBlocked() {
        if (publisher.blockedBy().isEmpty()) {
            declarations.ensureQueue(queue);
        }
    }

    private static void closeQuietly(Channel ch) {
        try {
            if (ch.isOpen()) {
                ch.close();
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            LOG.debug("close of a cancelled consumer's channel failed: {}", e.getMessage());
        }
    }

    /** Deliveries handed to the handler and not settled yet. */
    int inFlight() {
        return inFlight.get();
    }

    @Override
    public void close() {
        closing = true;
        publisher.removeGateListener(gateListener);
        for (ChannelConsumer c : consumers) {
            try {
                if (c.tag != null && c.channel.isOpen()) {
                    c.channel.basicCancel(c.tag);
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("cancel of a consumer on {} failed: {}", queue, e.getMessage());
            }
        }
        long deadline = System.nanoTime() + settings.shutdownGrace().toNanos();
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int unsettled = inFlight.get();
        for (ChannelConsumer c : consumers) {
            try {
                if (c.channel.isOpen()) {
                    c.channel.close();
                }
            } catch (IOException | TimeoutException | RuntimeException e) {
                LOG.debug("close of a channel on {} failed: {}", queue, e.getMessage());
            }
        }
        consumers.clear();
        LOG.info("decision=unsubscribe queue={} unsettled_returned_to_broker={}", queue, unsettled);
    }

    private final class ChannelConsumer extends DefaultConsumer {
        final Channel channel;
        volatile String tag;
        /** The unsettled tags of the channel instance delivering now (replaced when recovery replaces it). */
        private final AckTracker.Selector acks;

        ChannelConsumer(Channel channel) {
            super(channel);
            this.channel = channel;
            this.acks = new AckTracker.Selector(channel);
        }

        @Override
        public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties props, byte[] body) {
            // every delivered tag is known to the tracker before anything else, even one left unacked here: a batch's
            // multiple ack must never cover a tag nobody settled
            AckTracker tracker = acks.open(envelope.getDeliveryTag());
            if (closing || !publisher.awaitOpen(() -> closing || !channel.isOpen())) {
                return; // left unacked: the broker requeues it when the channel closes
            }
            inFlight.incrementAndGet();
            RabbitDelivery delivery;
            try {
                delivery = new RabbitDelivery(channel, envelope.getDeliveryTag(), envelope.isRedeliver(), props, body,
                        queue, publisher, declarations, clock, inFlight::decrementAndGet, giveBacks, tracker);
            } catch (RuntimeException e) {
                // nothing a producer sends may stop the consumer: the broker dead-letters it (x-death: rejected)
                inFlight.decrementAndGet();
                LOG.error("decision=dead-letter-by-reject queue={} message_id={} reason=\"unreadable delivery: {}\"",
                        queue, AmqpMessages.printable(props == null ? null : props.getMessageId()), e.toString());
                rejectQuietly(envelope.getDeliveryTag());
                tracker.closed(envelope.getDeliveryTag());
                return;
            }
            try {
                handler.onDelivery(delivery);
            } catch (RuntimeException | Error e) {
                LOG.error("decision=handler-failed queue={} message_id={} cause=\"{}\"", queue,
                        AmqpMessages.printable(props.getMessageId()), e.toString());
                if (e instanceof TransportException t) {
                    // the broker path failed (a settle could not publish for its whole patience): give the delivery
                    // back only after a pause, never at once, or it comes straight back and spins (and on a quorum
                    // queue every round counts against its delivery limit); a no-op if it already gave itself back
                    delivery.giveBackLater(t);
                } else {
                    delivery.settleAbandoned(e);
                }
                if (e instanceof VirtualMachineError vme) {
                    throw vme;
                }
            }
        }

        @Override
        public void handleCancel(String consumerTag) {
            consumers.remove(this);
            if (closing) {
                return;
            }
            LOG.warn("decision=consumer-cancelled-by-broker queue={} consumers={}/{} detail=\"declaring the topology"
                    + " again and subscribing\"", queue, consumers.size(), settings.consumers());
            reopener.execute(() -> resubscribe(this, 0));
        }

        private void rejectQuietly(long deliveryTag) {
            try {
                channel.basicReject(deliveryTag, false);
            } catch (IOException | RuntimeException e) {
                LOG.warn("decision=reject-lost queue={} cause=\"{}\"", queue, e.getMessage());
            }
        }
    }
}
