package dev.idemkit.spring;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;

/**
 * Dead-lettering for the idempotent listeners: the message, unchanged, into the durable queue {@code <queue>.dlq}
 * (declared when missing), published mandatory (a return fails it), with idemkit's dead-letter headers (reason, origin queue, every attempt, time), as
 * a persistent message on a channel in confirm mode; returns only once the broker confirmed it, so the caller may
 * then acknowledge the original. Headers of the original named like idemkit's ({@code x-idemkit-...}) are dropped
 * first: a producer cannot forge a dead letter's reason or history. Never logs the body. Thread-safe.
 */
final class RabbitDeadLetters {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitDeadLetters.class);
    static final String SUFFIX = ".dlq";
    private static final long CONFIRM_TIMEOUT_MS = 10_000;

    private final ConnectionFactory connections;
    private final InboxMeters meters;
    private final Clock clock;
    private final Set<String> served = ConcurrentHashMap.newKeySet();
    private final DefaultMessagePropertiesConverter converter = new DefaultMessagePropertiesConverter();

    RabbitDeadLetters(ConnectionFactory connections, InboxMeters meters, Clock clock) {
        this.connections = Objects.requireNonNull(connections, "connections");
        this.meters = Objects.requireNonNull(meters, "meters");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * The dead-letter queue exists before every dead letter (an operator may have deleted it since the last one): a
     * passive declare, and a durable declare only when it is missing (a queue an operator declared with arguments of
     * their own is used as it is).
     */
    private void ensureQueue(String dlq) {
        try (Connection connection = connections.createConnection();
                Channel channel = connection.createChannel(false)) {
            channel.queueDeclarePassive(dlq);
            return;
        } catch (IOException | TimeoutException | RuntimeException missing) {
            // 404: declare it below, on a fresh channel (the broker closed this one)
        }
        try (Connection connection = connections.createConnection();
                Channel channel = connection.createChannel(false)) {
            channel.queueDeclare(dlq, true, false, false, null);
        } catch (IOException | TimeoutException | RuntimeException e) {
            throw new AmqpException("could not declare the dead-letter queue " + dlq, e);
        }
    }

    /** A queue whose listener this advice served: its dead-letter queue is watched by the health indicator. */
    void served(String queue) {
        served.add(queue);
    }

    /** The depth of the dead-letter queue of every queue served so far (-1 where it could not be read). */
    Map<String, Long> depths() {
        Map<String, Long> depths = new HashMap<>();
        for (String queue : served) {
            String dlq = queue + SUFFIX;
            try (Connection connection = connections.createConnection();
                    Channel channel = connection.createChannel(false)) {
                depths.put(dlq, (long) channel.queueDeclare(dlq, true, false, false, null).getMessageCount());
            } catch (IOException | TimeoutException | RuntimeException e) {
                depths.put(dlq, -1L);
            }
        }
        return depths;
    }

    /**
     * Publishes the dead letter and waits for the broker's confirm.
     *
     * @throws AmqpException when it could not be confirmed: the original must not be acknowledged
     */
    void deadLetter(String queue, Message message, String reason, List<AttemptRecord> attempts) {
        String dlq = queue + SUFFIX;
        Map<String, Object> headers = new HashMap<>();
        message.getMessageProperties().getHeaders().forEach((k, v) -> {
            if (!k.toLowerCase(java.util.Locale.ROOT).startsWith("x-idemkit-")) {
                headers.put(k, v);
            }
        });
        headers.put(DeadLetterHeaders.REASON, reason);
        headers.put(DeadLetterHeaders.ORIGIN_QUEUE, queue);
        headers.put(DeadLetterHeaders.DEAD_LETTERED_AT, clock.instant().toString());
        headers.put(DeadLetterHeaders.ATTEMPTS, AttemptHistory.encode(attempts));
        AMQP.BasicProperties original = converter.fromMessageProperties(message.getMessageProperties(),
                StandardCharsets.UTF_8.name());
        AMQP.BasicProperties props = original.builder().headers(headers).deliveryMode(2).expiration(null).build();
        ensureQueue(dlq);
        try (Connection connection = connections.createConnection();
                Channel channel = connection.createChannel(false)) {
            java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();
            channel.addReturnListener(r -> returned.set(true));
            channel.confirmSelect();
            channel.basicPublish("", dlq, true, props, message.getBody());
            channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MS);
            if (returned.get()) { // unroutable: the broker confirms a returned message too
                throw new AmqpException("the dead letter was returned by the broker: " + dlq + " does not exist");
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            throw new AmqpException("dead-lettering into " + dlq + " was not confirmed: the message stays unacknowledged",
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AmqpException("interrupted while dead-lettering into " + dlq, e);
        }
        meters.deadLettered(queue);
        LOG.warn("queue={} message_id={} decision=dead-letter attempts={} reason=\"{}\"", queue,
                message.getMessageProperties().getMessageId(), attempts.size(), reason);
    }
}
