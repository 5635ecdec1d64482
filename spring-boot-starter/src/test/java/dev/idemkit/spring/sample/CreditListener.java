package dev.idemkit.spring.sample;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * A plain {@code @RabbitListener}: body "account:amount". It knows nothing of idemkit; with
 * {@code idemkit.rabbit.idempotent-listeners=true} the starter runs it in a transaction, through the inbox, with
 * retries and a dead-letter queue. A body starting with "poison" always fails.
 */
@Component
public class CreditListener {
    private final JdbcTemplate jdbc;

    public CreditListener(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @RabbitListener(queues = "${sample.queue}")
    public void onCredit(String body) {
        if (body.startsWith("poison")) {
            throw new IllegalStateException("cannot process this credit");
        }
        String[] parts = body.split(":");
        jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(parts[1]), parts[0]);
    }
}
