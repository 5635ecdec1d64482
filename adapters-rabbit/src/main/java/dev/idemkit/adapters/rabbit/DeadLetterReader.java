package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import dev.idemkit.adapters.rabbit.RabbitDeadLetter.BrokerDeath;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.ports.out.DeadLetterEntry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;

/**
 * Reads a message of {@code Q.dlq} back into a dead letter.
 *
 * <p>Whatever a producer wrote is data, not an instruction. idemkit's own dead letters pass through the
 * hold queue, so the broker's newest {@code x-death} entry names {@code Q.dlq.hold}: only then are the
 * idemkit headers (reason, attempts, id, time) taken as written. A message the broker dead-lettered by
 * itself (expired or too many in Q, the reject fallback, an operator's reject) still carries whatever
 * {@code x-idemkit-*} headers its producer set: it is described from {@code x-death} instead, its id is
 * derived from its content, and its attempts are known only when the broker took it from Q right after a
 * trip through one of Q's retry buckets. The origin queue is always Q, the queue whose DLQ is read: no
 * header can send a redrive elsewhere.
 */
final class DeadLetterReader {
    /** The {@code x-death} reason of a quorum queue's delivery limit. */
    static final String DELIVERY_LIMIT = "delivery_limit";

    private DeadLetterReader() {}

    static RabbitDeadLetter read(AMQP.BasicProperties props, byte[] body, String queue, Instant now) {
        Map<String, Object> headers = props.getHeaders() == null ? Map.of() : props.getHeaders();
        List<BrokerDeath> deaths = AmqpMessages.deaths(headers.get(AmqpMessages.X_DEATH));
        List<BrokerDeath> earlier = AmqpMessages.deaths(headers.get(AmqpMessages.EARLIER_DEATHS));
        BrokerDeath last = deaths.isEmpty() ? null : deaths.get(0);
        boolean ours = last != null && last.queue().equals(RabbitTopology.holdQueue(queue));

        String reason = ours ? AmqpMessages.text(headers.get(AmqpMessages.REASON)) : null;
        if (reason == null || reason.isBlank()) {
            if (last == null) {
                reason = "dead-lettered without a recorded reason";
            } else if (DELIVERY_LIMIT.equals(last.reason())) {
                reason = "delivery limit reached: the broker delivered it from " + last.queue() + " more often than its"
                        + " x-delivery-limit allows without it being settled (the consumer crashed, lost its connection"
                        + " or gave it back each time it held it), so it dead-lettered it before idemkit could count an"
                        + " attempt";
            } else {
                reason = "broker dead-lettered it from " + last.queue() + " (" + last.reason() + "); no idemkit reason recorded";
            }
        }
        boolean afterOurRetry = last != null && last.queue().equals(queue) && deaths.size() > 1
                && RabbitTopology.isRetryQueueOf(deaths.get(1).queue(), queue);
        List<AttemptRecord> attempts = ours || afterOurRetry ? AmqpMessages.history(headers) : List.of();
        Instant at = ours ? instant(AmqpMessages.text(headers.get(AmqpMessages.DEAD_LETTERED_AT))) : null;
        if (at == null) {
            at = last == null || last.time() == null ? now : last.time();
        }
        String id = ours ? AmqpMessages.text(headers.get(AmqpMessages.DEAD_LETTER_ID)) : null;
        if (id == null || id.isBlank()) {
            // stable across reads: message id, the broker's first death time, the body
            String when = deaths.isEmpty() ? "" : String.valueOf(deaths.get(deaths.size() - 1).time());
            id = "sha-" + Fingerprint.of(props.getMessageId() + "\n" + when + "\n"
                    + new String(body, StandardCharsets.ISO_8859_1)).hex().substring(0, 32);
        }
        Message original = AmqpMessages.toMessage(props, body, queue);
        return new RabbitDeadLetter(new DeadLetterEntry(id, new DeadLetter(original, reason, attempts, at)), deaths,
                earlier);
    }

    private static Instant instant(String text) {
        if (text == null) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
