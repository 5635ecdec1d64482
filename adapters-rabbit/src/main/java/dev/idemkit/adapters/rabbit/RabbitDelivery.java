package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.TopologyMismatchException;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One AMQP delivery. Every settlement that moves the message first publishes the new copy with a
 * confirm and only then acks the original, so a crash in between leaves a duplicate, never a loss. A copy
 * never carries an {@code x-death} entry that would make the broker drop it as a dead-letter cycle
 * ({@link AmqpMessages#copyHeaders}); the attempt history is read only from copies that came back from
 * this queue's retry buckets ({@link AmqpMessages#trustedHistory}).
 * <ul>
 *   <li>retry: a copy with the history appended goes to the retry bucket {@code Q.retry.Ns}, whose TTL
 *       dead-letters it back to {@code Q};
 *   <li>dead letter: a copy with reason, history, origin queue and a dead-letter id goes to
 *       {@code Q.dlq.hold}, whose TTL of 0 makes the BROKER dead-letter it into {@code Q.dlq} (so
 *       {@code x-death} is there). If that publish fails, the original is rejected without requeue and
 *       the broker dead-letters it through {@code Q}'s own dead-letter exchange instead.
 * </ul>
 */
final class RabbitDelivery extends AmqpDelivery {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitDelivery.class);
    private static final int OPEN = 0;
    private static final int SETTLING = 1;
    private static final int SETTLED = 2;
    /** How long a settle that must publish keeps trying while the delivery's channel is open (tests shorten it). */
    static volatile Duration settlePatience = Duration.ofSeconds(15);
    /** How long a delivery whose broker path failed is held before it is given back to the queue. */
    static final Duration GIVE_BACK_PAUSE = Duration.ofSeconds(1);

    private final Channel channel;
    private final long tag;
    private final String queue;
    private final Message message;
    private final ConfirmingPublisher publisher;
    private final Declarations declarations;
    private final Clock clock;
    private final Runnable onSettled;
    private final AckTracker tracker;
    private final ScheduledExecutorService scheduler;
    private final AtomicInteger state = new AtomicInteger(OPEN);

    RabbitDelivery(Channel channel, long tag, boolean redelivered, AMQP.BasicProperties props, byte[] body,
            String queue, ConfirmingPublisher publisher, Declarations declarations, Clock clock, Runnable onSettled,
            ScheduledExecutorService scheduler, AckTracker tracker) {
        super(new Received(queue, props, body), redelivered);
        this.tracker = tracker;
        this.scheduler = scheduler;
        this.channel = channel;
        this.tag = tag;
        this.queue = queue;
        this.message = received.message();
        this.publisher = publisher;
        this.declarations = declarations;
        this.clock = clock;
        this.onSettled = onSettled;
    }

    @Override
    public void ack() {
        begin();
        ackQuietly();
        done();
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        begin();
        try {
            int bucket = RabbitTopology.bucketSeconds(delay);
            declarations.ensureRetryBucket(queue, bucket);
            publishPatiently(RabbitTopology.retryQueue(queue, bucket),
                    received.retryCopy(failed, delay, bucket));
        } catch (TopologyMismatchException e) {
            // the retry bucket exists with other arguments: no retry can be scheduled until an operator fixes it, and
            // giving the delivery back would only bring it round again; dead-letter it, saying why
            LOG.error("decision=dead-letter queue={} message_id={} reason=\"its retry cannot be scheduled\" cause=\"{}\"",
                    queue, AmqpMessages.printable(message.rawId()), e.getMessage());
            deadLetterCopy("its retry could not be scheduled (attempt " + failed.number() + " failed: "
                    + failed.error() + "): " + e.getMessage(), failed);
            return;
        } catch (RuntimeException e) {
            state.set(OPEN);
            if (e instanceof TransportException t) {
                // whoever called may swallow this (the batched consumer's hand-over does): the delivery must not stay
                // unacked on a healthy channel forever, so it gives itself back after a pause (a redelivery follows)
                giveBackLater(t);
            }
            throw e;
        }
        ackQuietly();
        done();
    }

    /** Requeues this delivery after {@link #GIVE_BACK_PAUSE}, unless it is settled by then. */
    void giveBackLater(TransportException cause) {
        try {
            scheduler.schedule(() -> settleAbandoned(cause), GIVE_BACK_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            LOG.debug("transport closing: the broker requeues {} when the channel closes", AmqpMessages.printable(message.rawId()));
        }
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        begin();
        deadLetterCopy(reason, failed);
    }

    /** The dead letter's copy through the hold queue, then the ack; the reject fallback if the copy cannot be published. */
    private void deadLetterCopy(String reason, AttemptRecord failed) {
        try {
            publishPatiently(RabbitTopology.holdQueue(queue),
                    received.deadLetterCopy(failed, reason, clock.now()));
            ackQuietly();
        } catch (TransportException e) {
            LOG.error("decision=dead-letter-by-reject queue={} message_id={} cause=\"{}\"", queue, AmqpMessages.printable(message.rawId()),
                    e.getMessage());
            reject();
        }
        done();
    }

    /** A settle's copy, tried again while this delivery's channel is open ({@link ConfirmingPublisher#publishPatiently}). */
    private void publishPatiently(String target, AMQP.BasicProperties copy) {
        publisher.publishPatiently(target, copy, received.body(), settlePatience, channel::isOpen, received.describe());
    }

    /** Used when the handler threw without settling: requeue on an infrastructure failure, else dead-letter. */
    void settleAbandoned(Throwable failure) {
        if (!state.compareAndSet(OPEN, SETTLING)) {
            return;
        }
        try {
            if (failure instanceof TransportException) {
                channel.basicNack(tag, false, true);
            } else {
                channel.basicReject(tag, false);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("decision=settle-lost queue={} message_id={} cause=\"{}\"", queue, AmqpMessages.printable(message.rawId()), e.getMessage());
        }
        done();
    }

    boolean settled() {
        return state.get() == SETTLED;
    }

    private void reject() {
        try {
            channel.basicReject(tag, false);
        } catch (IOException | RuntimeException e) {
            LOG.warn("decision=reject-lost queue={} message_id={} cause=\"{}\"", queue, AmqpMessages.printable(message.rawId()), e.getMessage());
        }
    }

    private void ackQuietly() {
        try {
            channel.basicAck(tag, false);
        } catch (IOException | RuntimeException e) {
            // the broker still holds the message and will deliver it again: the inbox makes that harmless
            LOG.warn("decision=ack-lost queue={} message_id={} cause=\"{}\" (a redelivery will follow)", queue,
                    AmqpMessages.printable(message.rawId()), e.getMessage());
        }
    }

    /** Several deliveries of one channel instance acked together: see {@link AckTracker}. */
    @Override
    public java.util.Optional<BulkAck> bulkAck() {
        return java.util.Optional.of(tracker);
    }

    AckTracker tracker() {
        return tracker;
    }

    long tag() {
        return tag;
    }

    /** For {@link AckTracker}: claims the settlement; false when the delivery is already (being) settled. */
    boolean beginSettling() {
        return state.compareAndSet(OPEN, SETTLING);
    }

    /** For {@link AckTracker}: its ack frame went out (or failed). */
    void settledNow() {
        done();
    }

    private void begin() {
        if (!state.compareAndSet(OPEN, SETTLING)) {
            throw new IllegalStateException("delivery of " + AmqpMessages.printable(message.rawId()) + " on " + queue + " is already settled");
        }
    }

    private void done() {
        state.set(SETTLED);
        tracker.closed(tag);
        onSettled.run();
    }
}
