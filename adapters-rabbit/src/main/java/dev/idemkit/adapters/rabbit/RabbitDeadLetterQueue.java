package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter queue {@code Q.dlq} of a work queue {@code Q}.
 *
 * <p>Depth is a passive declare (messages ready; a DLQ that does not exist yet holds 0). Reading
 * without losing: on a private channel, {@code basic.get} without auto-ack takes messages one by one,
 * then the channel is closed, which returns every one of them unacknowledged; RabbitMQ puts requeued
 * messages back at their original position in a classic queue, so the order survives. While a read
 * is running those messages are invisible to other readers of the DLQ, and afterwards they carry the
 * redelivered flag. Reads, redrives and depths of one instance are serialised.
 *
 * <p>Redrive: the chosen message is republished to {@code Q} (whatever its headers claim) with a fresh attempt count and
 * the approval headers ({@code x-idemkit-redrive-approved-by}, {@code -reason}, {@code -approved-at}),
 * the broker confirms it, and only then is the dead letter acked. A crash in between leaves it in both
 * places (a duplicate for the inbox), never in neither.
 */
public final class RabbitDeadLetterQueue implements DeadLetterQueue {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitDeadLetterQueue.class);

    private final Connection connection;
    /** How long a scan waits for a quorum queue to take back what it returned. */
    static final Duration RETURN_WAIT = Duration.ofSeconds(2);

    private final Declarations declarations;
    private final Duration confirmTimeout;
    private final Clock clock;
    private final Object oneReadAtATime = new Object();

    RabbitDeadLetterQueue(Connection connection, Declarations declarations, Duration confirmTimeout, Clock clock) {
        this.connection = connection;
        this.declarations = declarations;
        this.confirmTimeout = confirmTimeout;
        this.clock = clock;
    }

    /** Empty: {@code Q.dlq} has no TTL, so RabbitMQ keeps a dead letter until it is redriven or removed. */
    @Override
    public Optional<Duration> retention(String queue) {
        return Optional.empty();
    }

    /**
     * Messages ready in {@code Q.dlq}, never taken in the middle of this instance's read: a read holds the messages it
     * has taken unacknowledged, and a depth read beside it counted fewer (down to 0 of 30), which turned the console's
     * alert off and on while a page refreshed. Another process reading the same queue can still lower it for a moment.
     */
    @Override
    public long depth(String queue) {
        synchronized (oneReadAtATime) {
            return countReady(RabbitTopology.deadLetterQueue(queue));
        }
    }

    @Override
    public List<DeadLetterEntry> peek(String queue, int max) {
        return inspect(queue, max).stream().map(RabbitDeadLetter::entry).toList();
    }

    /** As {@link #peek}, with each dead letter's {@code x-death} trail. */
    public List<RabbitDeadLetter> inspect(String queue, int max) {
        List<RabbitDeadLetter> out = new ArrayList<>();
        if (max < 1) {
            return out;
        }
        scan(queue, (ch, got, dl) -> {
            out.add(dl);
            return out.size() >= max ? Step.STOP : Step.NEXT;
        });
        return out;
    }

    @Override
    public Optional<DeadLetterEntry> find(String queue, String deadLetterId) {
        return findDetailed(queue, deadLetterId).map(RabbitDeadLetter::entry);
    }

    /** As {@link #find}, with the dead letter's {@code x-death} trail. */
    public Optional<RabbitDeadLetter> findDetailed(String queue, String deadLetterId) {
        List<RabbitDeadLetter> found = new ArrayList<>(1);
        scan(queue, (ch, got, dl) -> {
            if (dl.entry().id().equals(deadLetterId)) {
                found.add(dl);
                return Step.STOP;
            }
            return Step.NEXT;
        });
        return found.stream().findFirst();
    }

    @Override
    public boolean redrive(String queue, String deadLetterId, Approval approval) {
        AtomicBoolean moved = new AtomicBoolean();
        scan(queue, (ch, got, dl) -> {
            if (!dl.entry().id().equals(deadLetterId)) {
                return Step.NEXT;
            }
            // back to the queue whose DLQ this is: never to a queue named by a header, which a producer can write
            declarations.ensureForRedrive(queue);
            publishConfirmed(ch, queue, AmqpMessages.redriveCopy(got.getProps(), queue, approval), got.getBody());
            ch.basicAck(got.getEnvelope().getDeliveryTag(), false);
            moved.set(true);
            LOG.info("decision=redrive dead_letter={} origin_queue={} message_id={} approved_by=\"{}\"",
                    AmqpMessages.printable(deadLetterId), queue, AmqpMessages.printable(got.getProps().getMessageId()),
                    AmqpMessages.printable(approval.approvedBy()));
            return Step.REMOVED_AND_STOP;
        });
        return moved.get();
    }

    /** Messages ready in {@code name}; 0 when the queue does not exist. */
    long countReady(String name) {
        try (Channel ch = connection.createChannel()) {
            return ch.queueDeclarePassive(name).getMessageCount();
        } catch (IOException e) {
            if (notFound(e)) {
                return 0;
            }
            throw new TransportException("cannot read the depth of " + name + ": " + e.getMessage(), e);
        } catch (TimeoutException | RuntimeException e) {
            throw new TransportException("cannot read the depth of " + name + ": " + e.getMessage(), e);
        }
    }


    private void publishConfirmed(Channel ch, String queue, AMQP.BasicProperties props, byte[] body) throws IOException {
        AtomicBoolean returned = new AtomicBoolean();
        ch.addReturnListener(r -> returned.set(true));
        ch.basicPublish("", queue, true, props, body);
        try {
            ch.waitForConfirmsOrDie(confirmTimeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while waiting for the confirm of a redrive to " + queue, e);
        } catch (TimeoutException e) {
            throw new TransportException("redrive to " + queue + " not confirmed within " + confirmTimeout.toMillis() + " ms");
        }
        if (returned.get()) {
            throw new TransportException("redrive to " + queue + " was unroutable");
        }
    }

    @FunctionalInterface
    private interface Visitor {
        Step visit(Channel channel, GetResponse got, RabbitDeadLetter deadLetter) throws IOException;
    }

    /** What a scan does after a visit: read on, stop, or stop having acked (removed) the message just read. */
    private enum Step { NEXT, STOP, REMOVED_AND_STOP }

    /**
     * Reads {@code Q.dlq} one message at a time on a private channel, then closes it: the rest is requeued. A quorum
     * queue takes returned messages back asynchronously, after the close: until it has them, its depth reads low
     * (a peek followed by a depth saw 0 of 1). So the scan returns only once the queue holds again what it held minus
     * what this scan removed, or after {@link #RETURN_WAIT} (another reader may be holding some).
     */
    private void scan(String queue, Visitor visitor) {
        String dlq = RabbitTopology.deadLetterQueue(queue);
        synchronized (oneReadAtATime) {
            Channel ch = null;
            long before = -1;
            int removed = 0;
            try {
                before = countReady(dlq);
                ch = connection.createChannel();
                ch.confirmSelect();
                while (true) {
                    GetResponse got = ch.basicGet(dlq, false);
                    if (got == null) {
                        return;
                    }
                    RabbitDeadLetter dl = DeadLetterReader.read(got.getProps(), got.getBody(), queue, clock.now());
                    Step step = visitor.visit(ch, got, dl);
                    if (step != Step.NEXT) {
                        removed = step == Step.REMOVED_AND_STOP ? 1 : 0;
                        return;
                    }
                }
            } catch (IOException e) {
                if (!notFound(e)) {
                    throw new TransportException("cannot read " + dlq + ": " + e.getMessage(), e);
                }
            } catch (RuntimeException e) {
                throw e instanceof TransportException t ? t
                        : new TransportException("cannot read " + dlq + ": " + e.getMessage(), e);
            } finally {
                closeQuietly(ch);
                awaitReturned(dlq, before - removed);
            }
        }
    }

    private void awaitReturned(String dlq, long expected) {
        if (expected <= 0) {
            return;
        }
        long deadline = System.nanoTime() + RETURN_WAIT.toNanos();
        try {
            while (countReady(dlq) < expected && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.debug("could not read the depth of {} after a scan: {}", dlq, e.getMessage());
        }
    }

    private static boolean notFound(IOException e) {
        String text = String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
        return text.contains("NOT_FOUND") || text.contains("404");
    }

    private static void closeQuietly(Channel ch) {
        try {
            if (ch != null && ch.isOpen()) {
                ch.close();
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            LOG.debug("closing an inspection channel failed: {}", e.getMessage());
        }
    }
}
