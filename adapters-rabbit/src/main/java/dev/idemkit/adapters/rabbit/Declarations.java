package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Declares {@link RabbitTopology} once per queue (and once per retry bucket) per process, each time on
 * a short-lived channel, so that a refused declaration (a queue that exists with other arguments)
 * closes only that channel. Declarations are idempotent, so two processes declaring at once is fine.
 */
final class Declarations {

    @FunctionalInterface
    interface ChannelWork<T> {
        T run(Channel channel) throws IOException;
    }

    private static final Logger LOG = LoggerFactory.getLogger(Declarations.class);

    private final Connection connection;
    private final int retriesDeclaredUpFront;
    private final Duration deadLetterRetention;
    private final Set<String> declared = ConcurrentHashMap.newKeySet();
    private final Set<String> withoutRetention = ConcurrentHashMap.newKeySet();

    Declarations(Connection connection, int maxAttemptsHint, Duration deadLetterRetention) {
        this.connection = connection;
        this.retriesDeclaredUpFront = Math.max(0, maxAttemptsHint - 1);
        this.deadLetterRetention = deadLetterRetention;
    }

    void ensureQueue(String queue) {
        RabbitTopology.requireUsableName(queue);
        if (!declared.contains(queue)) {
            ensureDeadLetterQueue(queue);
            withChannel("declare the topology of " + queue, ch -> {
                RabbitTopology.declare(ch, queue, retriesDeclaredUpFront);
                return null;
            });
            declared.add(queue);
        }
    }

    /** The retention the broker enforces on {@code queue}'s DLQ, once its topology was declared here. */
    Optional<Duration> deadLetterRetention(String queue) {
        return withoutRetention.contains(queue) ? Optional.empty() : Optional.of(deadLetterRetention);
    }

    /** Forgets that {@code queue}'s topology was declared (the broker deleted it), so the next use declares it again. */
    void forget(String queue) {
        withoutRetention.remove(queue);
        declared.removeIf(name -> name.equals(queue) || name.startsWith(queue + ".retry."));
    }

    /**
     * {@code Q.dlq} with the retention. A DLQ that an older idemkit declared without it is used as it is: the
     * broker refuses other arguments for an existing queue, and deleting it would drop its dead letters. Its
     * dead letters are then kept until removed, which the redrive's dedup-window check guards.
     */
    private void ensureDeadLetterQueue(String queue) {
        String dlq = RabbitTopology.deadLetterQueue(queue);
        try {
            withChannel("declare " + dlq, ch -> {
                RabbitTopology.declareDeadLetterQueue(ch, queue, deadLetterRetention);
                return null;
            });
        } catch (TransportException e) {
            if (!String.valueOf(e.getMessage()).contains("PRECONDITION_FAILED")) {
                throw e;
            }
            withChannel("check " + dlq, ch -> ch.queueDeclarePassive(dlq));
            withoutRetention.add(queue);
            LOG.warn("decision=keep-existing-dlq queue={} detail=\"it exists with other arguments than x-message-ttl={}"
                    + " ms (declared by an older idemkit?); the broker does not enforce the dead-letter retention on"
                    + " it; a redrive past the dedup window is still refused\"", dlq, deadLetterRetention.toMillis());
        }
    }

    void ensureRetryBucket(String queue, int bucketSeconds) {
        String name = RabbitTopology.retryQueue(queue, bucketSeconds);
        if (!declared.contains(name)) {
            withChannel("declare " + name, ch -> {
                RabbitTopology.declareRetryBucket(ch, queue, bucketSeconds);
                return null;
            });
            declared.add(name);
        }
    }

    void delete(String queue) {
        withChannel("delete the topology of " + queue, ch -> {
            RabbitTopology.delete(ch, queue);
            return null;
        });
        forget(queue);
    }

    /** Runs {@code work} on a fresh channel and closes it; broker and I/O errors become {@link TransportException}. */
    <T> T withChannel(String what, ChannelWork<T> work) {
        try (Channel ch = connection.createChannel()) {
            return work.run(ch);
        } catch (IOException | TimeoutException | RuntimeException e) {
            String cause = e.getCause() != null && e.getMessage() == null ? e.getCause().getMessage() : e.getMessage();
            throw new TransportException("cannot " + what + ": " + cause, e);
        }
    }
}
