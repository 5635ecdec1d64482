package dev.idemkit.spring.outboxsample;

import dev.idemkit.spring.IdemkitOutbox;
import java.nio.charset.StandardCharsets;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The consumer of the order events, an idempotent listener ({@code idemkit.rabbit.idempotent-listeners=true}): each
 * event is appended to its order's {@code events} once, however often the relay published it, so the column says what
 * was lost (nothing), applied twice (nothing) and out of order (nothing).
 */
@Component
public class Shipping {
    private final JdbcTemplate jdbc;

    public Shipping(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @RabbitListener(queues = "${orders.queue}")
    public void onOrderEvent(Message message) {
        String type = message.getMessageProperties().getHeader(IdemkitOutbox.EVENT_TYPE_HEADER);
        String body = new String(message.getBody(), StandardCharsets.UTF_8);
        String orderId = body.substring(body.indexOf(':') + 1);
        jdbc.update("UPDATE orders SET events = events || ? WHERE id = ?", type + ";", orderId);
    }
}
