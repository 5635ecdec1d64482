package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

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

    private final Connection connection;
    private final int retriesDeclaredUpFront;
    private final Set<String> declared = ConcurrentHashMap.newKeySet();

    Declarations(Connection connection, int maxAttemptsHint) {
        this.connection = connection;
        this.retriesDeclaredUpFront = Math.max(0, maxAttemptsHint - 1);
    }

    void ensureQueue(String queue) {
        RabbitTopology.requireUsableName(queue);
        if (!declared.contains(queue)) {
            withChannel("declare the topology of " + queue, ch -> {
                RabbitTopology.declare(ch, queue, retriesDeclaredUpFront);
                return null;
            });
            declared.add(queue);
        }
    }

    /** Forgets that {@code queue}'s topology was declared (the broker deleted it), so the next use declares it again. */
    void forget(String queue) {
        declared.removeIf(name -> name.equals(queue) || name.startsWith(queue + ".retry."));
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
