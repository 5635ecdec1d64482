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
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * Reads a message of {@code Q.dlq} back into a dead letter. A message dead-lettered by idemkit carries
 * its reason, origin queue, attempt history and id in headers; one the broker dead-lettered otherwise
 * (the reject fallback, an operator's reject, a length limit) is described from {@code x-death}.
 */
final class DeadLetterReader {
    private DeadLetterReader() {}

    static RabbitDeadLetter read(AMQP.BasicProperties props, byte[] body, String queue, Instant now) {
        Map<String, Object> headers = props.getHeaders() == null ? Map.of() : props.getHeaders();
        List<BrokerDeath> deaths = deaths(headers.get(AmqpMessages.X_DEATH));
        String origin = AmqpMessages.text(headers.get(AmqpMessages.ORIGIN_QUEUE));
        if (origin == null) {
            origin = deaths.stream().filter(d -> !d.queue().startsWith(queue + ".")).map(BrokerDeath::queue)
                    .findFirst().orElse(queue);
        }
        String reason = AmqpMessages.text(headers.get(AmqpMessages.REASON));
        if (reason == null || reason.isBlank()) {
            reason = deaths.isEmpty() ? "dead-lettered without a recorded reason"
                    : "broker dead-lettered it from " + deaths.get(0).queue() + " (" + deaths.get(0).reason()
                            + "); no idemkit reason recorded";
        }
        List<AttemptRecord> attempts = AmqpMessages.history(headers);
        Instant at = instant(AmqpMessages.text(headers.get(AmqpMessages.DEAD_LETTERED_AT)));
        if (at == null) {
            at = deaths.isEmpty() || deaths.get(0).time() == null ? now : deaths.get(0).time();
        }
        String id = AmqpMessages.text(headers.get(AmqpMessages.DEAD_LETTER_ID));
        if (id == null || id.isBlank()) {
            // stable across reads: message id, the broker's first death time, the body
            String when = deaths.isEmpty() ? "" : String.valueOf(deaths.get(deaths.size() - 1).time());
            id = "sha-" + Fingerprint.of(props.getMessageId() + "\n" + when + "\n"
                    + new String(body, StandardCharsets.ISO_8859_1)).hex().substring(0, 32);
        }
        Message original = AmqpMessages.toMessage(props, body, origin);
        return new RabbitDeadLetter(new DeadLetterEntry(id, new DeadLetter(original, reason, attempts, at)), deaths);
    }

    static List<BrokerDeath> deaths(Object xDeath) {
        List<BrokerDeath> out = new ArrayList<>();
        if (!(xDeath instanceof List<?> list)) {
            return out;
        }
        for (Object item : list) {
            if (item instanceof Map<?, ?> m) {
                Object count = m.get("count");
                Object time = m.get("time");
                List<String> keys = new ArrayList<>();
                if (m.get("routing-keys") instanceof List<?> rk) {
                    rk.forEach(k -> keys.add(String.valueOf(k)));
                }
                out.add(new BrokerDeath(String.valueOf(m.get("queue")), String.valueOf(m.get("reason")),
                        count instanceof Number n ? n.longValue() : 0,
                        time instanceof Date d ? d.toInstant() : null, String.valueOf(m.get("exchange")), keys));
            }
        }
        return out;
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
