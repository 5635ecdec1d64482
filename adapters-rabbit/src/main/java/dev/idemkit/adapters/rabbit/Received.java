package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A message as a consumer of {@code queue} received it, read once at the edge: the domain's message, the attempts that
 * travelled with it (trusted only on a copy that came back from the queue's own retry buckets), and the copies that
 * settling it publishes. Shared by idemkit's own deliveries and adopted ones, so both settle alike.
 */
final class Received {
    private final String queue;
    private final AMQP.BasicProperties props;
    private final byte[] body;
    private final Message message;
    private final List<AttemptRecord> history;

    Received(String queue, AMQP.BasicProperties props, byte[] body) {
        this.queue = queue;
        this.props = props;
        this.body = body;
        this.message = AmqpMessages.toMessage(props, body, queue);
        this.history = AmqpMessages.trustedHistory(props.getHeaders(), queue);
    }

    String queue() {
        return queue;
    }

    byte[] body() {
        return body;
    }

    Message message() {
        return message;
    }

    /** Which attempt this delivery is, counting from 1. */
    int attempt() {
        return history.size() + 1;
    }

    List<AttemptRecord> history() {
        return history;
    }

    /** The printable id and queue, for log lines. */
    String describe() {
        return queue + " " + AmqpMessages.printable(message.rawId());
    }

    /** The copy that waits in retry bucket {@code bucket} for {@code delay}, {@code failed} appended to its history. */
    AMQP.BasicProperties retryCopy(AttemptRecord failed, Duration delay, int bucket) {
        return AmqpMessages.retryCopy(props, queue, history, failed, delay, bucket);
    }

    /** The copy that goes through the hold queue into the dead-letter queue with {@code reason}. */
    AMQP.BasicProperties deadLetterCopy(AttemptRecord failed, String reason, Instant now) {
        return AmqpMessages.deadLetterCopy(props, queue, history, failed, reason, now);
    }
}
