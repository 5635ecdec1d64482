package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.TopologyMismatchException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * A delivery that another AMQP consumer received (a Spring listener container), settled through idemkit's topology of
 * its queue exactly as {@link RabbitDelivery} settles its own: a retry is a confirmed copy in a retry bucket, a dead
 * letter a confirmed copy through the hold queue into the dead-letter queue (with the broker's {@code x-death}), each
 * with the same headers; the attempt history is read only from copies that came back from the queue's own buckets.
 * The acknowledgement of the original is the consumer's: {@code acknowledge} runs after a copy was confirmed (or for
 * {@link #ack}), and a copy that could not be confirmed throws, leaving the original unacknowledged. The settle paths
 * are declared (again, after a connection recovery) inside the same patient tries as the copy's publish.
 */
final class AdoptedDelivery extends AmqpDelivery {
    private final ConfirmingPublisher publisher;
    private final Declarations declarations;
    private final Clock clock;
    private final Runnable acknowledge;
    private final BooleanSupplier stillHeld;
    private final AtomicBoolean settled = new AtomicBoolean();

    AdoptedDelivery(Received received, boolean redelivered, ConfirmingPublisher publisher, Declarations declarations,
            Clock clock, Runnable acknowledge, BooleanSupplier stillHeld) {
        super(received, redelivered);
        this.stillHeld = stillHeld;
        this.publisher = publisher;
        this.declarations = declarations;
        this.clock = clock;
        this.acknowledge = acknowledge;
    }

    @Override
    public void ack() {
        begin();
        acknowledge.run();
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        begin();
        String queue = received.queue();
        try {
            int bucket = RabbitTopology.bucketSeconds(delay);
            publish(() -> {
                declarations.ensureSettlePaths(queue);
                declarations.ensureRetryBucket(queue, bucket);
            }, RabbitTopology.retryQueue(queue, bucket), received.retryCopy(failed, delay, bucket));
        } catch (TopologyMismatchException e) {
            // the bucket exists with other arguments: no retry can be scheduled until an operator fixes it (as
            // RabbitDelivery does: dead-lettered, saying why)
            publish(() -> declarations.ensureSettlePaths(queue), RabbitTopology.holdQueue(queue),
                    received.deadLetterCopy(failed, "its retry could not be scheduled"
                    + " (attempt " + failed.number() + " failed: " + failed.error() + "): " + e.getMessage(),
                    clock.now()));
        }
        acknowledge.run();
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        begin();
        publish(() -> declarations.ensureSettlePaths(received.queue()), RabbitTopology.holdQueue(received.queue()),
                received.deadLetterCopy(failed, reason, clock.now()));
        acknowledge.run();
    }

    /**
     * The copy, tried again for a while (the publishing connection may be recovering) and waited for through a resource
     * alarm, for as long as the consumer still holds the original; when it cannot be confirmed the delivery is not
     * settled and the consumer gives the original back to the broker (or its channel already did).
     */
    private void publish(Runnable declare, String target, AMQP.BasicProperties copy) {
        try {
            publisher.publishPatiently(declare, target, copy, received.body(), RabbitDelivery.settlePatience,
                    stillHeld, received.describe());
        } catch (TopologyMismatchException e) {
            throw e;
        } catch (RuntimeException e) {
            settled.set(false);
            throw e;
        }
    }

    private void begin() {
        if (!settled.compareAndSet(false, true)) {
            throw new IllegalStateException("delivery of " + received.describe() + " is already settled");
        }
    }
}
